import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CandidateProvider,
  type Envelope,
  GpuBenchmarked,
  JobFunded,
  type JobPlaced,
  JobSubmitted,
  LinkMeasured,
  type InputOf,
  type MessageDefinition,
  NetworkCoordinatesRefitted,
  originOf,
  type PayloadOf,
  ReserveOnEdge,
  streamIdOf,
} from '@gpunet/contracts';
import { parseEnsembleSpecOrThrow } from '@gpunet/ensemble-spec';
import type { EventingRuntime } from '@gpunet/eventing';
import type { RunningService } from '@gpunet/service-runtime';
import {
  EventCollector,
  FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
} from '@gpunet/testing';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDiscoveryAndCollect } from './support/discovery-stub';
import { runScheduler } from './support/service';
import { publishStanding } from './support/standing';
import { candidate, edgeId, fundedJob, submittedV1 } from './support/fixtures';

const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
const T0 = '2030-01-01T00:00:00.000Z';
const DAY = 86_400_000;
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

/**
 * The scheduler's measurements projection on real NATS and Postgres: benchmarking's events
 * (`gpu.benchmarked`, `link.measured`, `network.coordinates.refitted`) published on JetStream as
 * benchmarking's outbox would, consumed into the scheduler's schema, and used by the placement of
 * spec jobs — discovery's candidate query and the edges' reservations answered in the test.
 */
describe('scheduler measurements (NATS + Postgres)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let service: RunningService;
  let eventing: EventingRuntime;
  const clock = new FakeClock(T0);
  const events = new EventCollector<Envelope>('scheduler events');
  const subscriptions: Subscription[] = [];
  /** Edge → GPUs discovery offers (0: retired). */
  const offered = new Map<string, number>();
  const held = new Set<string>();
  /** Edge → its candidate, when not the default one (`candidate`). */
  const sized = new Map<string, (c: CandidateProvider) => CandidateProvider>();

  /** An edge the tests answer for; a member in good standing of the jobs' subnet(s), as settlement would report it on joining. */
  const addEdge = async (id: string, n = 2) => {
    offered.set(id, n);
    subscriptions.push(
      nats.nc.subscribe(ReserveOnEdge.subject({ edgeId: id }, nats.prefix), {
        callback: (_e: unknown, msg: Msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReserveOnEdge> }>();
          for (const g of data.gpuUuids) held.add(g);
          msg.respond(
            JSON.stringify({ reservationId: data.reservationId, outcome: 'accepted', reasons: [] }),
          );
        },
      }),
    );
    await publishStanding({ eventing, nats, pg }, 'public', [id]);
  };

  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId: string) => {
    const envelope = eventing.envelopes.message(def, data, streamId, originOf(`test:${streamId}`));
    await eventing.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  const benchmarked = (providerId: string, fp16: number, measuredAt = T0, gpus = 2) =>
    publish(
      GpuBenchmarked,
      {
        providerId,
        requestId: `bench-${providerId.slice(1, 5)}-${fp16}`,
        reason: 'initial',
        simulated: false,
        at: measuredAt,
        profile: {
          profileVersion: 1,
          profileId: `profile-${providerId.slice(1, 5)}-${fp16}`,
          kind: 'gpu',
          runner: {
            name: 'gpu-bench',
            version: '1',
            python: null,
            torch: null,
            backend: 'cuda 12.4',
            threads: null,
          },
          measuredAt,
          expiresAt: new Date(Date.parse(measuredAt) + 7 * DAY).toISOString(),
          durationMs: 60_000,
          devices: Array.from({ length: gpus }, (_, index) => ({
            index,
            uuid: `GPU-${providerId.slice(1, 5)}-${index}`,
            name: 'NVIDIA H100 80GB HBM3',
            kind: 'cuda' as const,
            memoryBytes: 80e9,
            matmulTflops: { fp32: 50, tf32: 350, fp16, bf16: fp16 },
            memoryBandwidthGBps: 3000,
            hostToDeviceGBps: 50,
            deviceToHostGBps: 50,
          })),
          peers: [{ a: 0, b: 1, GBps: 350, p2p: true }],
          notes: [],
        },
      },
      streamIdOf('benchmarking-provider', providerId),
    );

  const linked = (a: string, b: string, rttUs: number, throughput = rttUs < 1_000 ? 9e9 : 1e9) =>
    Promise.all(
      [
        [a, b],
        [b, a],
      ].map(([x, y]) =>
        publish(
          LinkMeasured,
          {
            a: x!,
            b: y!,
            rttUs,
            throughputBitsPerSecond: throughput,
            sameSite: rttUs < 1_000,
            path: 'direct',
            measuredAt: T0,
            expiresAt: later(6 * 3_600_000),
          },
          streamIdOf('benchmarking-links', x!),
        ),
      ),
    );

  const spec = (yaml: string) =>
    parseEnsembleSpecOrThrow(`apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: measured }
max_duration: 1h
allocations:
  main:
    execution: { image: ghcr.io/example/train:1.0, cmd: [python, train.py] }
${yaml}`);

  const submit = async (jobId: string, gpus: number, yaml: string) => {
    const funded = fundedJob({ jobId, tenantId: `tenant-${jobId}`, gpus });
    await publish(JobSubmitted, { ...submittedV1(funded), spec: spec(yaml) }, streamIdOf('job', jobId));
    await publish(JobFunded, funded, streamIdOf('job', jobId));
  };

  /** Resolves once the projection holds the link a → b with this throughput. */
  const projected = (a: string, b: string, throughput: number) =>
    waitFor(
      async () =>
        (
          await pg.pool.query(
            `SELECT 1 FROM "${pg.schema}".links WHERE a = $1 AND b = $2 AND throughput_bps = $3`,
            [a, b, throughput],
          )
        ).rows.length === 1,
      { timeoutMs: 10_000, description: `${a} → ${b} projected` },
    );

  /** A job of one of docs/examples, as written. */
  const submitExample = async (jobId: string, file: string) => {
    const example = parseEnsembleSpecOrThrow(readFileSync(join(REPO_ROOT, file), 'utf8'));
    const gpus = example.allocations.reduce((n, a) => n + (a.resources.gpus?.count ?? 0), 0);
    const funded = fundedJob({ jobId, tenantId: `tenant-${jobId}`, gpus });
    await publish(JobSubmitted, { ...submittedV1(funded), spec: example }, streamIdOf('job', jobId));
    await publish(JobFunded, funded, streamIdOf('job', jobId));
  };

  const ofJob = (type: string, jobId: string, also: (e: Envelope) => boolean = () => true) =>
    events
      .waitFor((e) => e.type === type && (e.data as { jobId: string }).jobId === jobId && also(e), {
        timeoutMs: 15_000,
      })
      .catch((error: unknown) => {
        const seen = events.items.filter((e) => (e.data as { jobId?: string }).jobId === jobId);
        throw new Error(`no ${type} of ${jobId}; saw ${JSON.stringify(seen.map((e) => e.data))}`, {
          cause: error,
        });
      });

  const placedOn = async (jobId: string) =>
    (await ofJob('job.placed', jobId)).data as PayloadOf<typeof JobPlaced>;

  const rows = async (table: string) =>
    (await pg.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${pg.schema}".${table}`)).rows[0]!.n;

  beforeAll(async () => {
    pg = await usePostgres({ label: 'scheduler_measured' });
    nats = await useNats({ label: 'scheduler_measured' });
    ({ service, eventing } = await runScheduler({ pg, nats, clock }));
    subscriptions.push(
      ...serveDiscoveryAndCollect(
        nats,
        () => offered.entries(),
        (uuid) => held.has(uuid),
        events,
        (id, n) => (sized.get(id) ?? ((c) => c))(candidate(id, n)),
      ),
    );
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    await service?.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it('projects benchmarking’s events, the newest figure winning, and excludes a provider measured below min_tflops', async () => {
    const [fast, slow] = [edgeId('P'), edgeId('S')];
    await addEdge(fast);
    await addEdge(slow);
    await benchmarked(fast, 700, later(-60_000));
    await benchmarked(slow, 55, later(-60_000));
    // An older profile arriving late (a redelivery) changes nothing; a third provider's profile after
    // it, on the same stream, shows when the consumer is past it.
    await benchmarked(fast, 1, later(-120_000));
    await benchmarked(edgeId('Q'), 300, later(-60_000));
    await waitFor(async () => (await rows('gpu_profiles')) === 3, {
      timeoutMs: 10_000,
      description: 'three profiles',
    });
    const fp16 = await pg.pool.query<{ provider_id: string; fp16: number }>(
      `SELECT provider_id, (gpus->0->'tflops'->>'fp16')::float8 AS fp16 FROM "${pg.schema}".gpu_profiles ORDER BY fp16`,
    );
    expect(fp16.rows).toEqual([
      { provider_id: slow, fp16: 55 },
      { provider_id: edgeId('Q'), fp16: 300 },
      { provider_id: fast, fp16: 700 },
    ]);

    // Four GPUs at ≥ 100 TFLOPS fp16: only the fast provider's two qualify — the job waits, saying why.
    const needsFour = `    resources:
      cpu: { cores: 1 }
      ram: { size: 1GiB }
      gpus: { count: 4, models: [H100], min_tflops: { fp16: 100 } }
    distributed: { framework: torchrun, gpus_per_rank: 1, max_nodes: 2 }
`;
    await submit('job-tflops-4', 4, needsFour);
    const queued = await ofJob(
      'job.queued',
      'job-tflops-4',
      (e) => (e.data as { reason: string | null }).reason !== null,
    );
    const reasons = JSON.stringify(queued.data);
    expect(reasons).toContain('GPU has 55 TFLOPS fp16 (measured), below 100');

    // Two such GPUs: placed on the fast provider, never the slow one.
    await submit('job-tflops-2', 2, needsFour.replace('count: 4', 'count: 2'));
    const placed = await placedOn('job-tflops-2');
    expect(placed.allocations.flatMap((a) => a.nodes.map((n) => n.providerId))).toEqual([fast]);
    offered.set(fast, 0);
    offered.set(slow, 0);
  });

  it('a max_rtt 20 ms gang waits across measured 80 ms links, naming the pair, and lands in the same-site group once it is measured', async () => {
    const [far1, far2] = [edgeId('Y'), edgeId('Z')];
    await addEdge(far1);
    await addEdge(far2);
    await linked(far1, far2, 80_000);
    await waitFor(async () => (await rows('links')) === 2, {
      timeoutMs: 10_000,
      description: 'the 80 ms link',
    });
    const gang = `    resources:
      cpu: { cores: 1 }
      ram: { size: 1GiB }
      gpus: { count: 4, models: [H100] }
    distributed:
      framework: torchrun
      gpus_per_rank: 1
      max_nodes: 2
      interconnect: { max_rtt: 20ms }
`;
    await submit('job-rtt', 4, gang);
    const queued = await ofJob(
      'job.queued',
      'job-rtt',
      (e) => (e.data as { reason: string | null }).reason !== null,
    );
    const pair = [far1, far2].sort().join(' ↔ ');
    expect((queued.data as { reason: string }).reason).toContain(
      `the nearest measured pair, ${pair}, has 80 ms RTT`,
    );

    // Two providers on one LAN join; once benchmarking has measured them, the parked job lands there.
    const [lan1, lan2] = [edgeId('L'), edgeId('M')];
    await addEdge(lan1);
    await addEdge(lan2);
    await linked(lan1, lan2, 300);
    await publish(
      NetworkCoordinatesRefitted,
      {
        hosts: [
          { hostId: lan1, x: 0, y: 0, height: 100, error: 0.1, siteId: lan1 },
          { hostId: lan2, x: 100, y: 0, height: 100, error: 0.1, siteId: lan1 },
          { hostId: far1, x: 80_000, y: 0, height: 100, error: 0.1, siteId: far1 },
        ],
        fittedAt: T0,
        expiresAt: later(6 * 3_600_000),
      },
      streamIdOf('benchmarking', 'coordinates'),
    );
    const placed = await placedOn('job-rtt');
    expect(placed.allocations.flatMap((a) => a.nodes.map((n) => n.providerId)).sort()).toEqual(
      [lan1, lan2].sort(),
    );
    const sites = await pg.pool.query<{ host_id: string; site_id: string }>(
      `SELECT host_id, site_id FROM "${pg.schema}".coordinates ORDER BY host_id`,
    );
    expect(sites.rows).toHaveLength(3);
    expect(
      sites.rows
        .filter((r) => r.site_id === lan1)
        .map((r) => r.host_id)
        .sort(),
    ).toEqual([lan1, lan2].sort());
  });

  it('example 03 waits on a measured 40 Gbit/s pair, naming it, and is placed once measured at 200; example 02 waits on 45 ms pairs and is placed once measured at 8 ms', async () => {
    // Example 03: 16 GPUs as two whole 8-GPU hosts at one site, ≥ 100 Gbps and < 2 ms between
    // them, bf16 ≥ 600 TFLOPS. First the pair is measured at 40 Gbit/s: it waits, naming it.
    const [x1, x2] = [edgeId('G'), edgeId('H')];
    // The earlier tests' providers are gone. These two are H200s: the first test's job still
    // waiting for four measured H100s takes none of them.
    for (const id of offered.keys()) offered.set(id, 0);
    const big = (c: CandidateProvider): CandidateProvider => ({
      ...c,
      cpuMillicores: 128_000,
      memoryBytes: 2048 * 1024 ** 3,
      gpus: c.gpus.map((g) => ({ ...g, model: 'NVIDIA H200', vramBytes: 141 * 1024 ** 3 })),
    });
    for (const x of [x1, x2]) {
      sized.set(x, big);
      await addEdge(x, 8);
      await benchmarked(x, 989, T0, 8);
    }
    await publish(
      NetworkCoordinatesRefitted,
      {
        hosts: [x1, x2].map((hostId, i) => ({
          hostId,
          x: i * 100,
          y: 0,
          height: 50,
          error: 0.1,
          siteId: x1,
        })),
        fittedAt: T0,
        expiresAt: later(6 * 3_600_000),
      },
      streamIdOf('benchmarking', 'coordinates'),
    );
    await linked(x1, x2, 400, 40e9);
    await projected(x2, x1, 40e9);
    await submitExample('job-example-03', 'docs/examples/03-h100x16-fast-fabric.yaml');
    const slow = await ofJob(
      'job.queued',
      'job-example-03',
      (e) => (e.data as { reason: string | null }).reason !== null,
    );
    expect((slow.data as { reason: string }).reason).toContain(
      `the nearest measured pair, ${[x1, x2].sort().join(' ↔ ')}, has 400 µs RTT, 40 Gbit/s`,
    );
    // Measured again at 200 Gbit/s (newer rows): the parked job lands on both hosts.
    await linked(x1, x2, 400, 200e9);
    const fabric = await placedOn('job-example-03');
    expect(fabric.allocations.flatMap((a) => a.nodes.map((n) => [n.providerId, n.gpuUuids.length]))).toEqual(
      expect.arrayContaining([
        [x1, 8],
        [x2, 8],
      ]),
    );
    for (const x of [x1, x2]) offered.set(x, 0);

    // Example 02: 8 GPUs on 2–4 hosts, ≥ 1 Gbps and < 20 ms between them. Four 2-GPU hosts
    // measured 45 ms apart: it waits, naming the nearest pair's figures.
    const far = ['A', 'B', 'C', 'D'].map(edgeId);
    for (const f of far) await addEdge(f, 2);
    for (const [i, a] of far.entries()) for (const b of far.slice(i + 1)) await linked(a, b, 45_000, 5e9);
    await projected(far[3]!, far[2]!, 5e9);
    await submitExample('job-example-02', 'docs/examples/02-consumer-8x8gb.yaml');
    const distant = await ofJob(
      'job.queued',
      'job-example-02',
      (e) => (e.data as { reason: string | null }).reason !== null,
    );
    const nearest = /the nearest measured pair, (\S+) ↔ (\S+), has 45 ms RTT, 5 Gbit\/s/.exec(
      (distant.data as { reason: string }).reason,
    );
    expect(nearest?.slice(1).every((id) => far.includes(id))).toBe(true);

    // Measured again at 8 ms (newer figures for the same pairs): the waiting job is tried again and
    // lands on the four hosts, two GPUs each.
    for (const [i, a] of far.entries()) for (const b of far.slice(i + 1)) await linked(a, b, 8_000, 5e9);
    const near = await placedOn('job-example-02');
    expect(
      near.allocations.flatMap((a) => a.nodes.map((n) => [n.providerId, n.gpuUuids.length])).sort(),
    ).toEqual(far.map((f) => [f, 2]).sort());
  });
});
