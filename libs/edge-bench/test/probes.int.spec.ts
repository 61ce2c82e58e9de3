import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureRtt, measureThroughput, probeLink, type ProbeResponder, startProbeResponder } from '../src';

describe('link probes on loopback', () => {
  let responder: ProbeResponder;

  beforeAll(async () => {
    responder = await startProbeResponder({
      address: '127.0.0.1',
      udpPort: 0,
      tcpPort: 0,
      maxBytes: 8 << 20,
    });
  });
  afterAll(async () => {
    await responder?.close();
  });

  it('measures RTT with sequential UDP echoes', async () => {
    const rtt = await measureRtt('127.0.0.1', responder.udpPort, 5, 500, 0);
    expect(rtt).not.toBeNull();
    expect(rtt!.received).toBe(5);
    expect(rtt!.minUs).toBeGreaterThan(0);
    expect(rtt!.minUs).toBeLessThanOrEqual(rtt!.medianUs);
  });

  it('measures throughput from the responder’s count, within the byte bound', async () => {
    const sample = await measureThroughput('127.0.0.1', responder.tcpPort, 4 << 20, 2_000);
    expect(sample.bytes).toBe(4 << 20);
    expect(sample.bitsPerSecond).toBeGreaterThan(1e8);
  });

  it('stops a transfer at its time bound and measures what arrived', async () => {
    const started = Date.now();
    const sample = await measureThroughput('127.0.0.1', responder.tcpPort, 8 << 20, 1);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(sample.bytes).toBeGreaterThan(0);
    expect(sample.bytes).toBeLessThanOrEqual(8 << 20);
  });

  it('refuses a transfer above its budget and ignores foreign datagrams', async () => {
    await expect(measureThroughput('127.0.0.1', responder.tcpPort, 64 << 20, 1_000)).rejects.toMatchObject({
      code: 'REFUSED',
    });
    const socket = createSocket('udp4');
    const answered = await new Promise<boolean>((resolve) => {
      socket.on('message', () => resolve(true));
      socket.send(Buffer.from('hello, is this an amplifier?'), responder.udpPort, '127.0.0.1');
      setTimeout(() => resolve(false), 300);
    });
    socket.close();
    expect(answered).toBe(false);
    const garbage = connect({ host: '127.0.0.1', port: responder.tcpPort });
    const closed = await new Promise<boolean>((resolve) => {
      garbage.on('connect', () => garbage.write(Buffer.alloc(16, 0x41)));
      garbage.on('close', () => resolve(true));
      garbage.on('error', () => resolve(true));
    });
    expect(closed).toBe(true);
  });

  it('tries endpoints in order and reports a peer nobody answers for as timed out', async () => {
    const result = await probeLink(
      {
        peerId: 'UPEER',
        endpoints: [
          { address: '127.0.0.1', udpPort: 9, tcpPort: 9 },
          { address: '127.0.0.1', udpPort: responder.udpPort, tcpPort: responder.tcpPort },
        ],
        throughput: true,
      },
      { rttSamples: 3, rttTimeoutMs: 100, throughputMaxBytes: 1 << 20, throughputMaxMs: 1_000 },
    );
    expect(result).toMatchObject({
      outcome: 'ok',
      endpoint: `127.0.0.1:${responder.udpPort}`,
      path: 'direct',
    });
    expect(result.throughput!.bytes).toBe(1 << 20);
    const none = await probeLink(
      { peerId: 'UPEER', endpoints: [{ address: '127.0.0.1', udpPort: 9, tcpPort: 9 }], throughput: true },
      { rttSamples: 2, rttTimeoutMs: 50, throughputMaxBytes: 1, throughputMaxMs: 10 },
    );
    expect(none).toMatchObject({ outcome: 'timeout', endpoint: null, rtt: null, throughput: null });
  });
});
