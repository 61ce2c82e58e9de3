/**
 * The load generator of bench/gateway, run as its own process so that it never shares an event
 * loop with the server it measures, over `node:http` keep-alive connections — the lightest client
 * Node ships (global fetch/undici costs more CPU per request, CPU the gateway would lose on a 2-core
 * machine). Two shapes:
 * - closed loop (default): `concurrency` clients, each sending its next request when the previous
 *   answer has been read — the server's capacity; latency is then mostly queueing (≈ clients ÷ rate);
 * - open loop (`ratePerSecond`): requests are due at a fixed rate whatever the answers do, on up to
 *   `concurrency` connections (a request due while all are busy waits for one), and each latency is
 *   measured from the moment the request was due, not sent — so a stalled server shows as latency
 *   instead of silently lowering the rate (no coordinated omission). Whether the server sustains a
 *   rate, and with what latency.
 *
 *   node bench/gateway/load.ts <config.json>   (Node's own type stripping: it imports only Node's modules)
 *
 * Prints one JSON line: requests, errors (non-expected statuses and transport errors, by kind),
 * seconds, req/s, p50/p99/max ms, peak RSS, and for submissions the job ids created.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoadConfig {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  /** GET: paths picked round-robin; POST: the one path. */
  readonly paths: readonly string[];
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** POST: a fresh Idempotency-Key per request. */
  readonly uniqueIdempotencyKey?: boolean;
  readonly expectStatus: number;
  readonly concurrency: number;
  /** Open loop: requests due per second (see above); without it the loop is closed. */
  readonly ratePerSecond?: number;
  /** Stop after this many requests, or after `seconds` (whichever is given). */
  readonly requests?: number;
  readonly seconds?: number;
  /** Not measured: this many seconds of the same load first (connections, JIT, caches). */
  readonly warmupSeconds?: number;
  /** Collect `jobId` of each answer (submissions). */
  readonly collectJobIds?: boolean;
  /** A request without an answer after this long is an error (`timeout`); default 10 s. */
  readonly requestTimeoutMs?: number;
  /** The measured run ends after this long whatever `requests` says (a stalled server); default 120 s. */
  readonly maxSeconds?: number;
}

export interface LoadResult {
  /** Open loop: requests that fell due in the measured window (each one answered or counted as an error). */
  readonly offered?: number;
  readonly requests: number;
  readonly errors: number;
  readonly errorKinds: Record<string, number>;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly peakRssMb: number;
  /** The load generator's own CPU time per request in the measured run (it shares the cores). */
  readonly cpuMsPerRequest: number;
  /**
   * Open loop: where the slow requests (over 25 ms, the gateway's p99 target) fell due — the 100 ms windows
   * holding the most of them, as [seconds into the run, slow requests, their max ms] — to tell a few
   * stalls from a tail spread over the whole run.
   */
  readonly slowWindows?: [number, number, number][];
  /** The generator's own event-loop delay in the measured run, p99 and max (its stalls count as latency). */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /** Requests of the warm-up (not measured; answered or failed). */
  readonly warmupRequests: number;
  readonly jobIds?: string[];
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadConfig;
const target = new URL(config.url);
const agent = new Agent({
  keepAlive: true,
  maxSockets: config.concurrency,
  maxFreeSockets: config.concurrency,
});

const once = (path: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...config.headers };
    if (config.uniqueIdempotencyKey) headers['idempotency-key'] = randomUUID();
    if (config.body !== undefined) headers['content-length'] = String(Buffer.byteLength(config.body));
    const req = request(
      { host: target.hostname, port: target.port, method: config.method, path, headers, agent },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.setTimeout(config.requestTimeoutMs ?? 10_000, () =>
      req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
    );
    req.on('error', reject);
    req.end(config.body);
  });

const loopDelay = monitorEventLoopDelay({ resolution: 5 });

const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const drive = async (
  measure: boolean,
  stopAfterRequests: number | undefined,
  stopAt: number | undefined,
): Promise<{
  latencies: number[];
  errors: Record<string, number>;
  jobIds: string[];
  seconds: number;
  issued: number;
}> => {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const jobIds: string[] = [];
  let issued = 0;
  const started = performance.now();
  const client = async (): Promise<void> => {
    for (;;) {
      if (stopAfterRequests !== undefined && issued >= stopAfterRequests) return;
      if (stopAt !== undefined && performance.now() >= stopAt) return;
      const path = config.paths[issued % config.paths.length]!;
      issued += 1;
      const t0 = performance.now();
      try {
        const res = await once(path);
        const ms = performance.now() - t0;
        if (res.status !== config.expectStatus) {
          errors[`http ${res.status}`] = (errors[`http ${res.status}`] ?? 0) + 1;
        } else if (measure) {
          latencies.push(ms);
          if (config.collectJobIds) jobIds.push((JSON.parse(res.body) as { jobId: string }).jobId);
        }
      } catch (error) {
        const kind = error instanceof Error ? ((error as { code?: string }).code ?? error.message) : 'error';
        errors[kind] = (errors[kind] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, client));
  return { latencies, errors, jobIds, seconds: (performance.now() - started) / 1000, issued };
};

/** Open loop: request `i` falls due at `start + i / rate`; latency runs from then. */
const driveOpen = async (
  measure: boolean,
  rate: number,
  stopAt: number,
): Promise<{
  latencies: number[];
  errors: Record<string, number>;
  seconds: number;
  offered: number;
  slowWindows: [number, number, number][];
}> => {
  const latencies: number[] = [];
  const slow = new Map<number, [number, number]>();
  const errors: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const intervalMs = 1000 / rate;
  let issued = 0;
  const one = async (path: string, dueAt: number): Promise<void> => {
    try {
      const res = await once(path);
      if (res.status !== config.expectStatus)
        errors[`http ${res.status}`] = (errors[`http ${res.status}`] ?? 0) + 1;
      else if (measure) {
        const ms = performance.now() - dueAt;
        latencies.push(ms);
        if (ms > 25) {
          const window = Math.floor((dueAt - started) / 100);
          const [n, max] = slow.get(window) ?? [0, 0];
          slow.set(window, [n + 1, Math.max(max, ms)]);
        }
      }
    } catch (error) {
      const kind = error instanceof Error ? ((error as { code?: string }).code ?? error.message) : 'error';
      errors[kind] = (errors[kind] ?? 0) + 1;
    }
  };
  for (;;) {
    const now = performance.now();
    if (now >= stopAt) break;
    // Everything due by now goes out (the agent queues what finds no free connection).
    for (let due = started + issued * intervalMs; due <= now; due = started + issued * intervalMs) {
      const p = one(config.paths[issued % config.paths.length]!, due);
      issued += 1;
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  const slowWindows = [...slow]
    .sort((a, b) => b[1][0] - a[1][0])
    .slice(0, 12)
    .map(([w, [n, max]]): [number, number, number] => [w / 10, n, Math.round(max)]);
  return { latencies, errors, seconds: (performance.now() - started) / 1000, offered: issued, slowWindows };
};

/** What one measured run prints. */
const summary = (
  run: { latencies: number[]; errors: Record<string, number>; seconds: number },
  cpu: NodeJS.CpuUsage,
  extra: Partial<LoadResult>,
): LoadResult => {
  const requests = run.latencies.length + Object.values(run.errors).reduce((a, b) => a + b, 0);
  const sorted = Float64Array.from(run.latencies).sort();
  return {
    requests: run.latencies.length,
    errors: Object.values(run.errors).reduce((a, b) => a + b, 0),
    errorKinds: run.errors,
    seconds: run.seconds,
    requestsPerSecond: run.latencies.length / run.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
    warmupRequests: 0,
    // maxRSS is in KiB.
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, requests),
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
    ...extra,
  };
};

const measured = async (): Promise<LoadResult> => {
  if (config.ratePerSecond !== undefined) {
    const rate = config.ratePerSecond;
    const warmup = config.warmupSeconds
      ? (await driveOpen(false, rate, performance.now() + config.warmupSeconds * 1000)).offered
      : 0;
    const cpu0 = process.cpuUsage();
    loopDelay.enable();
    const run = await driveOpen(true, rate, performance.now() + (config.seconds ?? 10) * 1000);
    return summary(run, process.cpuUsage(cpu0), {
      offered: run.offered,
      warmupRequests: warmup,
      slowWindows: run.slowWindows,
    });
  }
  const warmup = config.warmupSeconds
    ? (await drive(false, undefined, performance.now() + config.warmupSeconds * 1000)).issued
    : 0;
  const cpu0 = process.cpuUsage();
  loopDelay.enable();
  const limit = performance.now() + (config.maxSeconds ?? 120) * 1000;
  const run = await drive(
    true,
    config.requests,
    config.seconds === undefined ? limit : Math.min(limit, performance.now() + config.seconds * 1000),
  );
  return summary(run, process.cpuUsage(cpu0), {
    warmupRequests: warmup,
    ...(config.collectJobIds ? { jobIds: run.jobIds } : {}),
  });
};

const main = async (): Promise<void> => {
  const result = await measured();
  agent.destroy();
  process.stdout.write(`${JSON.stringify(result)}\n`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
