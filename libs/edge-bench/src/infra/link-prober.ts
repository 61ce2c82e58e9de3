import type { LinkProbeResult, ProbeEndpoint, RttSummary, ThroughputSample } from '@gpunet/contracts';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import {
  hrtimeUs,
  PROBE_MAGIC_RTT,
  PROBE_MAGIC_TCP,
  PROBE_VERSION,
  RTT_DATAGRAM_BYTES,
  TCP_HEADER_BYTES,
} from './probe-responder';

export interface ProbeBounds {
  /** UDP echoes per peer. */
  readonly rttSamples: number;
  /** Wait per echo before counting it lost. */
  readonly rttTimeoutMs: number;
  /** Upper bound of one transfer, bytes. */
  readonly throughputMaxBytes: number;
  /** Upper bound of one transfer, ms (the transfer is cut and measured from what arrived). */
  readonly throughputMaxMs: number;
  /** Pause between echoes, ms. Default 5. */
  readonly rttIntervalMs?: number;
}

export interface ProbeTarget {
  readonly peerId: string;
  readonly endpoints: readonly ProbeEndpoint[];
  readonly throughput: boolean;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * Sequential UDP echoes to one endpoint: each waits for its reply (or `timeoutMs`) before the next,
 * so samples never queue behind each other. Returns null when no reply came at all.
 */
export const measureRtt = async (
  address: string,
  port: number,
  samples: number,
  timeoutMs: number,
  intervalMs = 5,
): Promise<RttSummary | null> => {
  const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
  const rtts: number[] = [];
  let waiting: { seq: bigint; sentUs: number; done: (rtt: number | null) => void } | undefined;
  socket.on('message', (msg) => {
    if (msg.length !== RTT_DATAGRAM_BYTES || msg.toString('latin1', 0, 4) !== PROBE_MAGIC_RTT) return;
    if (waiting && msg.readBigUInt64BE(8) === waiting.seq) waiting.done(hrtimeUs() - waiting.sentUs);
  });
  socket.on('error', () => waiting?.done(null));
  try {
    await new Promise<void>((res) => socket.bind(0, () => res()));
    for (let i = 0; i < samples; i++) {
      const seq = BigInt(i + 1);
      const rtt = await new Promise<number | null>((res) => {
        const timer = setTimeout(() => res(null), timeoutMs);
        const sentUs = hrtimeUs();
        waiting = {
          seq,
          sentUs,
          done: (v) => {
            clearTimeout(timer);
            res(v);
          },
        };
        const msg = Buffer.alloc(RTT_DATAGRAM_BYTES);
        msg.write(PROBE_MAGIC_RTT, 0, 'latin1');
        msg.writeUInt32BE(PROBE_VERSION, 4);
        msg.writeBigUInt64BE(seq, 8);
        msg.writeBigUInt64BE(BigInt(sentUs), 16);
        socket.send(msg, port, address, (error) => {
          if (error) waiting?.done(null);
        });
      });
      waiting = undefined;
      if (rtt !== null) rtts.push(rtt);
      if (intervalMs > 0 && i + 1 < samples) await new Promise((r) => setTimeout(r, intervalMs));
    }
  } finally {
    socket.close();
  }
  if (rtts.length === 0) return null;
  return { minUs: Math.min(...rtts), medianUs: median(rtts), received: rtts.length, sent: samples };
};

/** Why a transfer could not be measured. */
export class ThroughputProbeError extends Error {
  override readonly name = 'ThroughputProbeError';
  constructor(
    readonly code: 'REFUSED' | 'UNREACHABLE' | 'TIMEOUT' | 'NO_DATA',
    message: string,
  ) {
    super(message);
  }
}

/**
 * One bounded bulk transfer to a responder: streams at most `maxBytes` for at most `maxMs`, and
 * takes the responder's own count (bytes received over the time from the first to the last byte) —
 * goodput as the receiver saw it, not what sat in our socket buffer.
 */
export const measureThroughput = (
  address: string,
  port: number,
  maxBytes: number,
  maxMs: number,
): Promise<ThroughputSample> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: address, port });
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    let sent = 0;
    let last: { bytes: number; elapsedUs: number } | undefined;
    let lines = '';
    let settled = false;
    // The transfer's time bound runs from the connection, not from the call: connecting is bounded
    // by the hard deadline below.
    let startedUs = 0;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(hard);
      socket.destroy();
      if (error && !last) return reject(error);
      if (!last || last.bytes === 0 || last.elapsedUs <= 0)
        return reject(new ThroughputProbeError('NO_DATA', 'the responder saw no data'));
      resolve({
        bitsPerSecond: (last.bytes * 8) / (last.elapsedUs / 1e6),
        bytes: last.bytes,
        durationMs: last.elapsedUs / 1000,
      });
    };
    // Past maxMs: stop sending and take the last report; past twice that, give up on the final one.
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(soft);
      if (!socket.destroyed) socket.end();
    };
    let soft: NodeJS.Timeout | undefined;
    const hard = setTimeout(
      () => settle(new ThroughputProbeError('TIMEOUT', 'transfer timed out')),
      maxMs * 2 + 1000,
    );
    const pump = () => {
      while (!ended && sent < maxBytes && hrtimeUs() - startedUs < maxMs * 1000) {
        const n = Math.min(chunk.length, maxBytes - sent);
        sent += n;
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return;
      }
      end();
    };
    socket.setNoDelay(true);
    socket.on('connect', () => {
      // On a slow machine the time bound can pass before the connection is up: nothing to send then.
      if (ended) return;
      startedUs = hrtimeUs();
      soft = setTimeout(end, maxMs);
      const header = Buffer.alloc(TCP_HEADER_BYTES);
      header.write(PROBE_MAGIC_TCP, 0, 'latin1');
      header.writeUInt32BE(PROBE_VERSION, 4);
      header.writeBigUInt64BE(BigInt(maxBytes), 8);
      socket.write(header);
      pump();
    });
    socket.on('drain', pump);
    socket.on('data', (data: Buffer) => {
      lines += data.toString('utf8');
      let nl: number;
      while ((nl = lines.indexOf('\n')) >= 0) {
        const line = lines.slice(0, nl);
        lines = lines.slice(nl + 1);
        try {
          const report = JSON.parse(line) as { bytes: number; elapsedUs: number };
          if (Number.isFinite(report.bytes) && Number.isFinite(report.elapsedUs)) last = report;
        } catch {
          // not a report: ignore
        }
      }
    });
    socket.on('end', () => settle());
    socket.on('close', () => {
      clearTimeout(soft);
      settle();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(soft);
      // A responder refuses a budget above its bound by resetting the connection.
      const code =
        error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET'
          ? 'REFUSED'
          : error.code === 'ETIMEDOUT'
            ? 'TIMEOUT'
            : 'UNREACHABLE';
      settle(new ThroughputProbeError(code, error.message));
    });
  });

/**
 * Probes one peer: tries its endpoints in order until one answers RTT echoes, then (when asked)
 * measures throughput to the same one. Never throws: a failure is an outcome.
 */
export const probeLink = async (
  target: ProbeTarget,
  bounds: ProbeBounds,
  path: 'direct' | 'overlay' = 'direct',
): Promise<LinkProbeResult> => {
  for (const endpoint of target.endpoints) {
    const rtt = await measureRtt(
      endpoint.address,
      endpoint.udpPort,
      bounds.rttSamples,
      bounds.rttTimeoutMs,
      bounds.rttIntervalMs,
    );
    if (rtt === null) continue;
    let throughput: ThroughputSample | null = null;
    if (target.throughput) {
      try {
        throughput = await measureThroughput(
          endpoint.address,
          endpoint.tcpPort,
          bounds.throughputMaxBytes,
          bounds.throughputMaxMs,
        );
      } catch {
        throughput = null;
      }
    }
    return {
      peerId: target.peerId,
      endpoint: `${endpoint.address}:${endpoint.udpPort}`,
      outcome: 'ok',
      rtt,
      throughput,
      path,
    };
  }
  return { peerId: target.peerId, endpoint: null, outcome: 'timeout', rtt: null, throughput: null, path };
};
