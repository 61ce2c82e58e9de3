import {
  type CandidateProvider,
  DEFAULT_SUBNET_TRUST,
  type Envelope,
  GetPlacementExplanation,
  GpuVerificationChanged,
  type GpuVerificationStatus,
  type InputOf,
  type IsolationLevel,
  JobCancelled,
  JobFunded,
  type JobPlaced,
  JobSubmittedV1,
  type MessageDefinition,
  originOf,
  type PayloadOf,
  ProviderChallenged,
  ProviderReliabilityChanged,
  ReserveOnEdge,
  streamIdOf,
  type SubnetTrust,
} from '@gpunet/contracts';
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

const T0 = '2030-01-01T00:00:00.000Z';
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const ALLOWING: SubnetTrust = { ...DEFAULT_SUBNET_TRUST, simulatedGpus: 'allowed' };

/**
 * The subnet's trust rules (simulated GPUs, verified GPUs, minimum isolation) and benchmarking's
 * trust in providers, enforced by placement on real NATS and Postgres: `gpu.verification-changed`,
 * `provider.challenged` and `provider.reliability-changed` published on JetStream as benchmarking's
 * outbox would, consumed
 * into the scheduler's projection; discovery's candidate query and the edges' reservations
 * answered in the test (the stub honours `includeSimulated` as discovery does).
 */
describe('scheduler trust (NATS + Postgres)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let service: RunningService;
  let eventing: EventingRuntime;
  const clock = new FakeClock(T0);
  const events = new EventCollector<Envelope>('scheduler events');
  const subscriptions: Subscription[] = [];
  /** Edge → GPUs discovery offers (0: retired). */
  const offered = new Map<string, number>();
  /** Edges whose inventory is declared (simulated). */
  const simulated = new Set<string>();
  /** Edges by the isolation they run ranks with (default `container`, the fixture's). */
  const isolation = new Map<string, IsolationLevel>();
  const held = new Set<string>();
  /** Every reservation the edges were asked for, by edge. */
  const reserves: { edgeId: string; data: PayloadOf<typeof ReserveOnEdge> }[] = [];
  let seq = 0;

  /** An edge the tests answer for; a member in good standing of the jobs' subnet(s), as settlement would report it on joining. */
  const addEdge = async (
    id: string,
    opts: { simulated?: boolean; gpus?: number; isolation?: IsolationLevel } = {},
  ) => {
    offered.set(id, opts.gpus ?? 2);
    if (opts.simulated === true) simulated.add(id);
    if (opts.isolation !== undefined) isolation.set(id, opts.isolation);
    subscriptions.push(
      nats.nc.subscribe(ReserveOnEdge.subject({ edgeId: id }, nats.prefix), {
        callback: (_e: unknown, msg: Msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReserveOnEdge> }>();
          reserves.push({ edgeId: id, data });
          for (const g of data.gpuUuids) held.add(g);
          msg.respond(
            JSON.stringify({ reservationId: data.reservationId, outcome: 'accepted', reasons: [] }),
          );
        },
      }),
    );
    for (const subnet of ['live', 'demo']) await publishStanding({ eventing, nats, pg }, subnet, [id]);
  };

  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId: string) => {
    const envelope = eventing.envelopes.message(def, data, streamId, originOf(`test:${streamId}`));
    await eventing.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  const uuids = (providerId: string, n = 2) =>
    Array.from({ length: n }, (_, i) => `GPU-${providerId.slice(1, 5)}-${i}`);

  /** Benchmarking's word on every GPU of a provider; resolves once the projection holds it. */
  const verification = async (
    providerId: string,
    status: GpuVerificationStatus,
    cause: PayloadOf<typeof GpuVerificationChanged>['cause'],
    challengeId: string | null = null,
  ) => {
    const at = later(++seq * 1_000);
    await publish(
      GpuVerificationChanged,
      { providerId, gpus: uuids(providerId).map((uuid) => ({ uuid, status })), cause, challengeId, at },
      streamIdOf('benchmarking-provider', providerId),
    );
    await waitFor(
      async () =>
        (
          await pg.pool.query(
            `SELECT 1 FROM "${pg.schema}".gpu_verification WHERE provider_id = $1 AND changed_at = $2`,
            [providerId, at],
          )
        ).rows.length === 1,
      { timeoutMs: 10_000, description: `${providerId} ${status}` },
    );
  };

  /** A challenge of every GPU of the provider that came back late, then the GPUs unverified. */
  const failsLate = async (providerId: string, challengeId: string) => {
    for (const gpuUuid of uuids(providerId))
      await publish(
        ProviderChallenged,
        {
          providerId,
          challengeId,
          reason: 'registration',
          jobId: null,
          gpuUuid,
          outcome: 'failed',
          evidence: {
            seed: 'a'.repeat(64),
            n: 4096,
            dtype: 'fp16',
            claimedTflops: 700,
            deadlineMs: 400,
            elapsedMs: 9_000,
            root: 'b'.repeat(64),
            openedRows: [],
            failure: { kind: 'late', detail: 'commitment after 9000 ms, deadline 400 ms' },
            bytesSent: 100,
            bytesReceived: 100,
          },
          at: later(++seq * 1_000),
        },
        streamIdOf('benchmarking-provider', providerId),
      );
    await verification(providerId, 'unverified', 'challenge-failed', challengeId);
  };

  const reliability = async (providerId: string, score: number) => {
    const at = later(++seq * 1_000);
    await publish(
      ProviderReliabilityChanged,
      { providerId, score, previous: 0.8, cause: 'challenge-passed', at },
      streamIdOf('benchmarking-provider', providerId),
    );
    await waitFor(
      async () =>
        (
          await pg.pool.query(
            `SELECT 1 FROM "${pg.schema}".provider_reliability WHERE provider_id = $1 AND score = $2`,
            [providerId, score],
          )
        ).rows.length === 1,
      { timeoutMs: 10_000, description: `${providerId} scored ${score}` },
    );
  };

  const submit = async (jobId: string, gpus: number, trust: SubnetTrust, subnetId = 'live') => {
    const base = fundedJob({ jobId, tenantId: `tenant-${jobId}`, gpus, subnetId });
    const funded = { ...base, terms: { ...base.terms, trust } };
    await publish(JobSubmittedV1, submittedV1(funded), streamIdOf('job', jobId));
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

  /** The reason of the job's first `job.queued` that carries one (it waits, saying why). */
  const waitsBecause = async (jobId: string, includes: string) =>
    (
      (
        await ofJob('job.queued', jobId, (e) =>
          ((e.data as { reason: string | null }).reason ?? '').includes(includes),
        )
      ).data as { reason: string }
    ).reason;

  const providersOf = async (jobId: string) =>
    ((await ofJob('job.placed', jobId)).data as PayloadOf<typeof JobPlaced>).allocations.flatMap((a) =>
      a.nodes.map((n) => n.providerId),
    );

  const retire = (...ids: string[]) => {
    for (const id of ids) offered.set(id, 0);
  };

  const placements = (jobId: string) =>
    events.items.filter((e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === jobId);

  beforeAll(async () => {
    pg = await usePostgres({ label: 'scheduler_trust' });
    nats = await useNats({ label: 'scheduler_trust' });
    ({ service, eventing } = await runScheduler({ pg, nats, clock }));
    subscriptions.push(
      ...serveDiscoveryAndCollect(
        nats,
        () => offered.entries(),
        (uuid) => held.has(uuid),
        events,
        (id, n): CandidateProvider => ({
          ...candidate(id, n),
          simulated: simulated.has(id),
          ...(isolation.has(id) ? { isolation: isolation.get(id)! } : {}),
        }),
      ),
    );
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    await service?.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it('a subnet that refuses simulated GPUs never gets them (the job waits, saying so); one that allows them does', async () => {
    const sim = edgeId('S');
    await addEdge(sim, { simulated: true });
    await submit('job-refused', 2, DEFAULT_SUBNET_TRUST, 'live');
    const reason = await waitsBecause('job-refused', 'simulated');
    expect(reason).toContain("2 by simulated-gpus (simulated GPUs refused by subnet 'live')");
    const { explanation } = await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-refused' });
    expect(explanation).toMatchObject({ status: 'waiting', outcome: { kind: 'failure' } });
    if (explanation?.outcome.kind !== 'failure') throw new Error('no failure explained');
    expect(explanation.outcome.reasons).toContainEqual({
      plugin: 'simulated-gpus',
      reason: 'SimulatedRefused',
      message: "simulated GPUs refused by subnet 'live'",
      gpus: 2,
    });

    // The demo's subnet allows them: placed there. The refusing job still waits.
    await submit('job-allowed', 2, ALLOWING, 'demo');
    expect(await providersOf('job-allowed')).toEqual([sim]);
    expect(placements('job-refused')).toEqual([]);
    retire(sim);
    // Out of the way of the next tests' providers.
    await publish(
      JobCancelled,
      { jobId: 'job-refused', usage: [], cancelledAt: clock.now().toISOString() },
      streamIdOf('job', 'job-refused'),
    );
    await waitFor(
      async () =>
        (await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-refused' })).explanation?.status ===
        'cancelled',
      { timeoutMs: 10_000, description: 'job-refused cancelled' },
    );
  });

  it('an unverified provider is left out, naming the failed challenge; the job lands on a verified one', async () => {
    const [liar, honest] = [edgeId('L'), edgeId('H')];
    await addEdge(liar);
    await failsLate(liar, 'chal-liar-1');
    // Only the liar's GPUs could serve it: the job waits, saying why.
    await submit('job-verified-1', 2, DEFAULT_SUBNET_TRUST);
    const reason = await waitsBecause('job-verified-1', 'unverified');
    expect(reason).toContain(
      "2 by verified-gpus (unverified: challenge chal-liar-1 failed (late); verified GPUs required by subnet 'live')",
    );
    // An honest provider whose GPUs pass their challenge: the parked job lands there, not on the liar.
    await addEdge(honest);
    await verification(honest, 'pending', 'registered');
    await verification(honest, 'verified', 'challenge-passed', 'chal-honest-1');
    expect(await providersOf('job-verified-1')).toEqual([honest]);
    const { explanation } = await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-verified-1' });
    expect(explanation?.outcome.kind).toBe('placement');
    retire(liar, honest);
  });

  it('verified → unverified excludes the GPUs from the next round; verified again wakes the parked job', async () => {
    const flip = edgeId('F');
    await addEdge(flip);
    await verification(flip, 'verified', 'challenge-passed', 'chal-flip-1');
    await verification(flip, 'unverified', 'challenge-failed', 'chal-flip-2');
    await submit('job-flip', 2, DEFAULT_SUBNET_TRUST);
    expect(await waitsBecause('job-flip', 'unverified')).toContain(
      '2 by verified-gpus (unverified: challenge chal-flip-2 failed;',
    );
    expect(placements('job-flip')).toEqual([]);
    await verification(flip, 'verified', 'challenge-passed', 'chal-flip-3');
    expect(await providersOf('job-flip')).toEqual([flip]);
    retire(flip);
  });

  it('host processes never serve a subnet requiring containers (the job waits, saying why); a container edge does, and each reserve carries the minimum', async () => {
    const [host, boxed] = [edgeId('W'), edgeId('X')];
    await addEdge(host, { isolation: 'host-process' });
    await verification(host, 'verified', 'challenge-passed', 'chal-host-1');
    // The default trust: containers at least. Only the host-process edge's GPUs could serve it.
    await submit('job-isolated', 2, DEFAULT_SUBNET_TRUST, 'live');
    const reason = await waitsBecause('job-isolated', 'isolation');
    expect(reason).toContain("2 by isolation (edge runs host-process; subnet 'live' requires container)");
    const { explanation } = await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-isolated' });
    if (explanation?.outcome.kind !== 'failure') throw new Error('no failure explained');
    expect(explanation.outcome.reasons).toContainEqual({
      plugin: 'isolation',
      reason: 'IsolationTooWeak',
      message: "edge runs host-process; subnet 'live' requires container",
      gpus: 2,
    });
    expect(reserves.filter((r) => r.edgeId === host)).toEqual([]);

    // A verified edge that runs containers: the parked job lands there, asking for containers.
    await addEdge(boxed, { isolation: 'container' });
    await verification(boxed, 'verified', 'challenge-passed', 'chal-boxed-1');
    expect(await providersOf('job-isolated')).toEqual([boxed]);
    expect(
      reserves.filter((r) => r.data.jobId === 'job-isolated').map((r) => [r.edgeId, r.data.minimumIsolation]),
    ).toEqual([[boxed, 'container']]);

    // A test subnet that allows host processes may use the host-process edge: its reserve says so.
    await submit('job-host-ok', 2, { ...DEFAULT_SUBNET_TRUST, minimumIsolation: 'host-process' }, 'demo');
    expect(await providersOf('job-host-ok')).toEqual([host]);
    expect(
      reserves.filter((r) => r.data.jobId === 'job-host-ok').map((r) => [r.edgeId, r.data.minimumIsolation]),
    ).toEqual([[host, 'host-process']]);
    retire(host, boxed);
  });

  it('reliability breaks the tie between otherwise equal providers, before the seeded tie-break', async () => {
    // Two pairs of identical verified providers, each pair alone in the round (same seed, same
    // positions): the more reliable one wins once first and once second in discovery's order.
    const [a, b, c, d] = [edgeId('A'), edgeId('B'), edgeId('C'), edgeId('D')];
    for (const id of [a, b]) {
      await addEdge(id);
      await verification(id, 'verified', 'challenge-passed', `chal-${id.slice(1, 5)}`);
    }
    await reliability(a, 0.95);
    await reliability(b, 0.3);
    await submit('job-tie-1', 2, DEFAULT_SUBNET_TRUST);
    expect(await providersOf('job-tie-1')).toEqual([a]);
    const { explanation } = await eventing.client.ask(GetPlacementExplanation, { jobId: 'job-tie-1' });
    if (explanation?.outcome.kind !== 'placement') throw new Error('no placement explained');
    expect(explanation.outcome.allocations[0]!.alternatives[0]).toMatchObject({
      lostOn: 'tie-break',
      message: 'equal on every other count, but its providers are less reliable (0.30 vs 0.95)',
    });
    retire(a, b);

    for (const id of [c, d]) {
      await addEdge(id);
      await verification(id, 'verified', 'challenge-passed', `chal-${id.slice(1, 5)}`);
    }
    await reliability(c, 0.3); // d: unscored, the default 0.8
    await submit('job-tie-2', 2, DEFAULT_SUBNET_TRUST);
    expect(await providersOf('job-tie-2')).toEqual([d]);
    retire(c, d);
  });
});
