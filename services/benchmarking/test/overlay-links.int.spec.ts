import {
  type Envelope,
  GetNetworkEstimate,
  type InputOf,
  JobLaunching,
  type LinkMeasured,
  type MeasuredLink,
  type MessageDefinition,
  OverlayPathsReported,
  type PairPath,
  type PayloadOf,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { EventCollector, FakeClock, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchmarkingUnderTest, startBenchmarking } from './support/harness';
import { publishEvent } from './support/publish-event';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const HOUR = 3600_000;
const LINK_TTL_MS = 6 * HOUR;
const edge = (c: string) => `U${c.repeat(55)}`;

/** Host `edgeId` runs `ranks` ranks of the job at overlay `address`. */
interface JobHost {
  readonly edgeId: string;
  readonly address: string;
  readonly ranks?: number;
}

const launching = (
  jobId: string,
  attempt: number,
  hosts: readonly JobHost[],
): InputOf<typeof JobLaunching> => {
  const ranks = hosts.flatMap((h, nodeRank) =>
    Array.from({ length: h.ranks ?? 1 }, (_, localRank) => ({ h, nodeRank, localRank })),
  );
  return {
    jobId,
    tenantId: 'tenant-1',
    attempt,
    worldSize: ranks.length,
    masterAddr: hosts[0]!.address,
    masterPort: 29_500,
    ranks: ranks.map(({ h, nodeRank, localRank }, rank) => ({
      rank,
      localRank,
      nodeRank,
      allocation: 'main',
      providerId: h.edgeId,
      hostId: `host-${h.edgeId.slice(1, 6)}`,
      reservationId: `res-${jobId}-${nodeRank}`,
      gpuUuids: [`GPU-${localRank}`],
      gpuClass: 'H100-80GB',
      address: h.address,
    })),
    barrierUntil: new Date(T0.getTime() + 60_000).toISOString(),
    at: T0.toISOString(),
  };
};

const direct = (a: string, b: string, rttMs: number, aToBBps: number, bToABps: number): PairPath => ({
  a,
  b,
  path: 'direct',
  rttMs,
  aToBBps,
  bToABps,
});

const pathsReport = (
  jobId: string,
  pairs: readonly PairPath[],
  generatedAt = T0.toISOString(),
): InputOf<typeof OverlayPathsReported> => ({
  jobId,
  generatedAt,
  pairs: [...pairs],
  direct: pairs.filter((p) => p.path === 'direct').length,
  relayed: pairs.filter((p) => p.path === 'relayed').length,
  other: pairs.filter((p) => p.path !== 'direct' && p.path !== 'relayed').length,
});

describe("benchmarking learns links from jobs' overlay path reports (NATS + Postgres)", () => {
  let svc: BenchmarkingUnderTest;
  const clock = new FakeClock(T0);
  const measured = new EventCollector<Envelope<string, PayloadOf<typeof LinkMeasured>>>('link.measured');

  const publish = <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId: string) =>
    publishEvent(jetstream(svc.nats.nc), svc.nats.prefix, def, data, streamId);
  /** Execution's `job.launching` of `attempt`, on the job's stream. */
  const launch = (jobId: string, attempt: number, hosts: readonly JobHost[]) =>
    publish(JobLaunching, launching(jobId, attempt, hosts), `job-${jobId}`);
  /** Two hosts of a job, at `100.96.{net}.1` and `.2`. */
  const launchPair = (jobId: string, x: string, y: string, net: number) =>
    launch(jobId, 1, [
      { edgeId: x, address: `100.96.${net}.1` },
      { edgeId: y, address: `100.96.${net}.2` },
    ]);
  /** Execution's `overlay.paths-reported`, on the job's overlay stream (as execution appends it). */
  const report = (jobId: string, pairs: readonly PairPath[], generatedAt?: string) =>
    publish(OverlayPathsReported, pathsReport(jobId, pairs, generatedAt), `overlay-${jobId}`);
  const estimate = () =>
    askQuery(svc.nats.nc, GetNetworkEstimate, {}, { timeoutMs: 5_000, prefix: svc.nats.prefix });
  /** The measured links between x and y (both ways), a → b order. */
  const linksBetween = async (x: string, y: string): Promise<MeasuredLink[]> =>
    (await estimate()).links
      .filter((l) => (l.a === x && l.b === y) || (l.a === y && l.b === x))
      .sort((p, q) => p.a.localeCompare(q.a));
  /** Waits for the links between x and y, one each way. */
  const bothWays = (x: string, y: string) =>
    waitFor(
      async () => {
        const found = await linksBetween(x, y);
        return found.length === 2 ? found : null;
      },
      { description: `links both ways between ${x.slice(0, 2)}… and ${y.slice(0, 2)}…` },
    );
  const counter = async (name: string, labels: Record<string, string>) =>
    (await svc.metrics.getSingleMetric(name)?.get())?.values.find((v) =>
      Object.entries(labels).every(([k, value]) => v.labels[k] === value),
    )?.value ?? 0;
  /** Waits for a counter to reach `n` (the service counts after its transaction committed). */
  const counted = (name: string, labels: Record<string, string>, n: number) =>
    waitFor(async () => (await counter(name, labels)) === n, {
      description: `${name} ${JSON.stringify(labels)} at ${n}`,
    });
  const pending = async (jobId: string) =>
    (
      await svc.pg.pool.query(
        `SELECT count(*)::int AS n FROM "${svc.pg.schema}".overlay_pending_reports WHERE job_id = $1`,
        [jobId],
      )
    ).rows[0].n as number;

  beforeAll(async () => {
    // The production LAN threshold (1 ms): these links are measured by nobody but the reports.
    svc = await startBenchmarking('bench_overlay', { lanRttUs: 1_000, linkTtlMs: LINK_TTL_MS }, clock);
    svc.nats.nc.subscribe(`${svc.nats.prefix}.benchmarking.link.measured.v1`, {
      callback: (_e, m) => measured.push(m.json()),
    });
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
  });

  it('records a direct pair as overlay links between its hosts, one each way; a relayed pair only as relayed events; no mixed pair', async () => {
    const [A, B, C] = [edge('A'), edge('B'), edge('C')];
    await launch('job-direct', 1, [
      { edgeId: A, address: '100.96.0.1', ranks: 2 },
      { edgeId: B, address: '100.96.0.2' },
      { edgeId: C, address: '100.96.0.3' },
    ]);
    await report('job-direct', [
      direct('100.96.0.1', '100.96.0.2', 12.5, 800_000_000, 600_000_000),
      { ...direct('100.96.0.1', '100.96.0.3', 80, 5_000_000, 5_000_000), path: 'relayed' },
      { ...direct('100.96.0.2', '100.96.0.3', 0.2, 9e8, 9e8), path: 'mixed' },
    ]);
    const validity = {
      measuredAt: T0.toISOString(),
      expiresAt: new Date(T0.getTime() + LINK_TTL_MS).toISOString(),
    };
    const overlay = { rttUs: 12_500, sameSite: false, path: 'overlay', ...validity };
    expect(await bothWays(A, B)).toEqual([
      { a: A, b: B, throughputBitsPerSecond: 800_000_000, ...overlay },
      { a: B, b: A, throughputBitsPerSecond: 600_000_000, ...overlay },
    ]);
    // The relayed and mixed pairs came in the same message: their absence from the projection (and
    // so from the coordinate fit) is final; the relayed pair is published for the scheduler.
    expect((await estimate()).links.filter((l) => l.a === C || l.b === C)).toEqual([]);
    const relayed = await measured.waitFor((e) => e.data.a === A && e.data.b === C);
    expect(relayed.data).toMatchObject({ path: 'overlay', relayed: true, rttUs: 80_000, sameSite: false });
    const event = await measured.waitFor((e) => e.data.a === A && e.data.b === B);
    expect(event).toMatchObject({
      streamId: `benchmarking-links-${A}`,
      data: { path: 'overlay', rttUs: 12_500 },
    });
    // The coordinates are refitted from the new links, as after direct probes.
    await waitFor(
      async () => {
        const hosts = (await estimate()).coordinates.map((c) => c.hostId);
        return hosts.includes(A) && hosts.includes(B);
      },
      { description: 'coordinates for A and B' },
    );
    await counted('gpunet_benchmarking_overlay_pairs_skipped_total', { reason: 'mixed' }, 1);
    await counted('gpunet_benchmarking_overlay_links_measured_total', {}, 4);
  });

  it('holds a report that arrives before its launch, and resolves it when the launch arrives', async () => {
    const [D, E] = [edge('D'), edge('E')];
    const early = await report('job-early', [direct('100.96.1.1', '100.96.1.2', 0.4, 1e9, 2e9)]);
    await waitFor(async () => (await pending('job-early')) === 1, { description: 'the report held' });
    expect(await linksBetween(D, E)).toEqual([]);
    await launchPair('job-early', D, E, 1);
    const links = await bothWays(D, E);
    expect(links.map((l) => [l.a, l.b, l.rttUs, l.throughputBitsPerSecond, l.sameSite, l.path])).toEqual([
      [D, E, 400, 1e9, true, 'overlay'],
      [E, D, 400, 2e9, true, 'overlay'],
    ]);
    expect(await pending('job-early')).toBe(0);
    // The links are caused by the report, held until the launch, not by the launch.
    expect(await measured.waitFor((e) => e.data.a === D && e.data.b === E)).toMatchObject({
      correlationId: early.correlationId,
      causationId: early.eventId,
    });
    await counted('gpunet_benchmarking_overlay_reports_total', { result: 'held' }, 1);
    await counted('gpunet_benchmarking_overlay_reports_total', { result: 'resolved' }, 1);
  });

  it('skips an address the launch does not name and holds a never-launched job, without stopping later messages', async () => {
    const [F, G, H, I] = [edge('F'), edge('G'), edge('H'), edge('I')];
    await launchPair('job-odd', F, G, 2);
    await report('job-odd', [
      direct('100.96.2.1', '100.96.2.2', 3, 1e8, 1e8),
      direct('100.96.2.1', '100.96.2.9', 3, 1e8, 1e8),
    ]);
    await report('job-never', [direct('100.96.9.1', '100.96.9.2', 3, 1e8, 1e8)]);
    await launchPair('job-after', H, I, 3);
    await report('job-after', [direct('100.96.3.1', '100.96.3.2', 7, 2e8, 3e8)]);
    await bothWays(H, I);
    expect((await linksBetween(F, G)).map((l) => [l.a, l.b])).toEqual([
      [F, G],
      [G, F],
    ]);
    expect((await estimate()).links.filter((l) => l.a === F || l.b === F)).toHaveLength(2);
    await counted('gpunet_benchmarking_overlay_pairs_skipped_total', { reason: 'unknown-host' }, 1);
    expect(await pending('job-never')).toBe(1);
    expect(
      await counter('gpunet_consumer_dead_lettered_total', { consumer: 'benchmarking-job-overlays' }),
    ).toBe(0);
  });

  it("keeps the newest attempt's hosts, even when an older attempt's launch is applied after it", async () => {
    const [J, K] = [edge('J'), edge('K')];
    const attempt = (n: number, jAddress: string, kAddress: string) =>
      launch('job-retry', n, [
        { edgeId: J, address: jAddress },
        { edgeId: K, address: kAddress },
      ]);
    await attempt(1, '100.96.4.2', '100.96.4.1');
    await attempt(2, '100.96.4.1', '100.96.4.2');
    await attempt(1, '100.96.4.2', '100.96.4.1');
    await report('job-retry', [direct('100.96.4.1', '100.96.4.2', 5, 111e6, 222e6)]);
    expect((await bothWays(J, K)).map((l) => [l.a, l.b, l.throughputBitsPerSecond])).toEqual([
      [J, K, 111e6],
      [K, J, 222e6],
    ]);
  });

  it('drops held reports once their links would be expired, and does not hold a report born expired', async () => {
    clock.advance(LINK_TTL_MS);
    await report('job-stale', [direct('100.96.5.1', '100.96.5.2', 3, 1e8, 1e8)]);
    await report('job-fresh', [direct('100.96.6.1', '100.96.6.2', 3, 1e8, 1e8)], clock.now().toISOString());
    await waitFor(async () => (await pending('job-fresh')) === 1, { description: 'the fresh report held' });
    expect(await pending('job-never')).toBe(0);
    expect(await pending('job-stale')).toBe(0);
    await counted('gpunet_benchmarking_overlay_reports_total', { result: 'dropped-expired' }, 1);
  });

  it('reported no errors', () => {
    expect(svc.errors).toEqual([]);
  });
});
