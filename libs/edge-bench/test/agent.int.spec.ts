import {
  BenchmarkReplySchema,
  buildEnvelope,
  EdgeBenchmarkReported,
  EdgeBenchmarkStream,
  EdgeLinksProbed,
  type Envelope,
  type PayloadOf,
  ProbeLinksOnEdge,
  RunBenchmarkOnEdge,
  signingInput,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, type NatsTestContext, useNats } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser, fromPublic } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EdgeBenchmarkAgent,
  type ProbeResponder,
  signedReporter,
  simulatedProfile,
  startProbeResponder,
} from '../src';

describe('EdgeBenchmarkAgent over NATS', () => {
  let nats: NatsTestContext;
  let agent: EdgeBenchmarkAgent;
  let responder: ProbeResponder;
  const key = createUser();
  const edgeId = key.getPublicKey();
  const peer = createUser().getPublicKey();
  let busy = false;
  let sequence = 0;
  let release: (() => void) | undefined;
  const reports = new EventCollector<Envelope>('edge reports');

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_bench_agent' });
    await ensureStreams(await nats.jsm(), [EdgeBenchmarkStream], nats.prefix);
    responder = await startProbeResponder({ address: '127.0.0.1', udpPort: 0, tcpPort: 0 });
    nats.nc.subscribe(`${nats.prefix}.edge.*.*.v1`, {
      callback: (_e, m) => reports.push(m.json<Envelope>()),
    });
    agent = new EdgeBenchmarkAgent({
      edgeId,
      nc: nats.nc,
      prefix: nats.prefix,
      isBusy: () => busy,
      benchmark: async (request) => {
        if (request.reason === 'manual') await new Promise<void>((r) => (release = r));
        return simulatedProfile({
          gpus: [{ index: 0, uuid: 'SIM-nvidia-0', vendor: 'nvidia', model: 'NVIDIA L4', vramBytes: 24e9 }],
          rng: () => 0.5,
          nowMs: Date.parse('2030-01-01T00:00:00Z'),
          ttlMs: request.ttlMs,
          profileId: request.requestId,
        });
      },
      report: signedReporter({
        edgeId,
        js: jetstream(nats.nc),
        prefix: nats.prefix,
        nextSequence: () => ++sequence,
        sign: (input) => Buffer.from(key.sign(new TextEncoder().encode(input))).toString('base64url'),
      }),
    });
    agent.start();
  });

  afterAll(async () => {
    release?.();
    await agent?.stop();
    await responder?.close();
    await nats?.cleanup();
  });

  const ask = async (def: typeof RunBenchmarkOnEdge | typeof ProbeLinksOnEdge, data: unknown) => {
    const envelope = buildEnvelope(def, data as never, { streamId: `benchmark-${edgeId}` });
    const reply = await nats.nc.request(def.subject({ edgeId }, nats.prefix), JSON.stringify(envelope), {
      timeout: 5_000,
    });
    return BenchmarkReplySchema.parse(reply.json());
  };
  const benchmark = (requestId: string, reason = 'initial', allowWhileBusy = false) =>
    ask(RunBenchmarkOnEdge, {
      requestId,
      reason,
      suites: ['matmul', 'memory'],
      maxDurationMs: 60_000,
      ttlMs: 86_400_000,
      allowWhileBusy,
    });

  it('accepts a benchmark, then publishes the profile as a signed report that verifies', async () => {
    expect(await benchmark('bench-1')).toEqual({ requestId: 'bench-1', outcome: 'accepted' });
    const report = await reports.waitFor((e) => e.type === EdgeBenchmarkReported.type);
    const data = report.data as PayloadOf<typeof EdgeBenchmarkReported>;
    expect(data).toMatchObject({ edgeId, requestId: 'bench-1', outcome: 'completed' });
    expect(data.profile!.kind).toBe('simulated');
    const ok = fromPublic(edgeId).verify(
      new TextEncoder().encode(signingInput(EdgeBenchmarkReported, data)),
      Buffer.from(data.signature, 'base64url'),
    );
    expect(ok).toBe(true);
    // Stored in the EDGE_BENCHMARKS stream, for benchmarking's durable consumer.
    const info = await (await nats.jsm()).streams.info(`${nats.prefix}_${EdgeBenchmarkStream.name}`);
    expect(info.state.messages).toBeGreaterThanOrEqual(1);
  });

  it('declines while a job holds the host, and a second run while one is going', async () => {
    busy = true;
    expect(await benchmark('bench-2')).toMatchObject({ outcome: 'declined', reason: { code: 'BUSY' } });
    expect(await benchmark('bench-3', 'initial', true)).toMatchObject({ reason: { code: 'BUSY' } });
    busy = false;
    expect(await benchmark('bench-4', 'manual')).toMatchObject({ outcome: 'accepted' });
    expect(await benchmark('bench-5')).toMatchObject({
      outcome: 'declined',
      reason: { code: 'ALREADY_RUNNING' },
    });
    release!();
    await reports.waitFor((e) => (e.data as { requestId: string }).requestId === 'bench-4');
  });

  it('declines a command off contract', async () => {
    const reply = await nats.nc.request(
      RunBenchmarkOnEdge.subject({ edgeId }, nats.prefix),
      JSON.stringify({ type: 'edge.benchmark', version: 1, data: { requestId: 'x' } }),
      { timeout: 5_000 },
    );
    expect(reply.json()).toMatchObject({ outcome: 'declined', reason: { code: 'INVALID_REQUEST' } });
  });

  it('probes links on request and reports RTT and throughput per peer', async () => {
    const reply = await ask(ProbeLinksOnEdge, {
      requestId: 'probe-1',
      targets: [
        {
          peerId: peer,
          endpoints: [{ address: '127.0.0.1', udpPort: responder.udpPort, tcpPort: responder.tcpPort }],
          throughput: true,
        },
      ],
      rttSamples: 4,
      rttTimeoutMs: 200,
      throughputMaxBytes: 1 << 20,
      throughputMaxMs: 1_000,
      allowWhileBusy: false,
    });
    expect(reply.outcome).toBe('accepted');
    const report = await reports.waitFor((e) => e.type === EdgeLinksProbed.type);
    const data = report.data as PayloadOf<typeof EdgeLinksProbed>;
    expect(data.results).toHaveLength(1);
    expect(data.results[0]).toMatchObject({ peerId: peer, outcome: 'ok', path: 'direct' });
    expect(data.results[0]!.rtt!.received).toBe(4);
    expect(data.results[0]!.throughput!.bytes).toBe(1 << 20);
  });
});
