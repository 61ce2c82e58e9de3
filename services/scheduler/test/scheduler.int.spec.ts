import {
  type Envelope,
  GetPlacementExplanation,
  JobCancelled,
  JobFunded,
  type JobPlaced,
  JobSubmitted,
  JobSubmittedV1,
  ProviderReservationsChanged,
  type InputOf,
  type MessageDefinition,
  originOf,
  type PayloadOf,
  ReleaseOnEdge,
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
import type { PlacementEngine } from '../src/app/placement.engine';
import type { PlacerLeadership } from '../src/app/placer-leadership.service';
import { OPEN_JOBS, PLACEMENT_ENGINE, PLACER_LEADERSHIP } from '../src/app/scheduler.tokens';
import type { OpenJobsRepository } from '../src/infra/open-jobs.repository';
import { serveDiscoveryAndCollect } from './support/discovery-stub';
import { runScheduler } from './support/service';
import { publishStanding } from './support/standing';
import { edgeId, fundedJob, submittedV1 } from './support/fixtures';

type Behaviour = 'accept' | 'decline' | 'silent';

/** One scheduler replica, booted as in production, and the providers the tests look into. */
interface Replica {
  readonly service: RunningService;
  readonly eventing: EventingRuntime;
  readonly engine: PlacementEngine;
  readonly leadership: PlacerLeadership;
  readonly openJobs: OpenJobsRepository;
}

/**
 * The scheduler against real NATS and Postgres: discovery's candidate query and four provider edges
 * are answered in the test (each edge accepts, declines or never answers its ReserveOnEdge), the
 * deadline runs on a FakeClock, `job.funded` arrives through JetStream and `job.placed` /
 * `job.queued` leave through the outbox.
 */
describe('scheduler (NATS + Postgres)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let runtime: Replica;
  const clock = new FakeClock('2030-01-01T00:00:00Z');
  const errors: string[] = [];
  const events = new EventCollector<Envelope>('scheduler events');
  const subscriptions: Subscription[] = [];
  const behaviour = new Map<string, Behaviour>();
  const gpus = new Map<string, number>();
  /** reservationId → edge, for every reservation an edge currently holds. */
  const holds = new Map<string, string>();
  const reserved: { edge: string; reservationId: string; request: PayloadOf<typeof ReserveOnEdge> }[] = [];
  /** reservationId → the GPUs it holds, for discovery's answers (held GPUs are not offered). */
  const heldGpus = new Map<string, readonly string[]>();

  /** An edge the tests answer for; a member in good standing of the jobs' subnet(s), as settlement would report it on joining. */
  const addEdge = async (id: string, b: Behaviour, n = 2) => {
    behaviour.set(id, b);
    gpus.set(id, n);
    subscriptions.push(
      nats.nc.subscribe(ReserveOnEdge.subject({ edgeId: id }, nats.prefix), {
        callback: (_e: unknown, msg: Msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReserveOnEdge> }>();
          reserved.push({ edge: id, reservationId: data.reservationId, request: data });
          const now = behaviour.get(id);
          if (now === 'silent') return;
          if (now === 'decline') {
            msg.respond(
              JSON.stringify({
                reservationId: data.reservationId,
                outcome: 'declined',
                reasons: [
                  {
                    code: 'GPU_BUSY',
                    message: `${data.gpuUuids[0]} is held by another job`,
                    field: 'gpuUuids',
                  },
                ],
              }),
            );
            return;
          }
          holds.set(data.reservationId, id);
          heldGpus.set(data.reservationId, data.gpuUuids);
          msg.respond(
            JSON.stringify({ reservationId: data.reservationId, outcome: 'accepted', reasons: [] }),
          );
        },
      }),
      nats.nc.subscribe(ReleaseOnEdge.subject({ edgeId: id }, nats.prefix), {
        callback: (_e: unknown, msg: Msg) => {
          const { data } = msg.json<{ data: PayloadOf<typeof ReleaseOnEdge> }>();
          if (behaviour.get(id) === 'silent') return;
          const released = holds.delete(data.reservationId);
          heldGpus.delete(data.reservationId);
          msg.respond(JSON.stringify({ reservationId: data.reservationId, released }));
        },
      }),
    );
    await publishStanding({ eventing: runtime.eventing, nats, pg }, 'public', [id]);
  };

  /** The chain a test message of `def` about `jobId` starts: its own per message type. */
  const chainOf = (def: MessageDefinition, jobId: string) => `${def.type}:${jobId}`;

  /** Publishes `data` about a job as the service owning `def` would, starting a chain of its own. */
  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>, jobId: string) => {
    const envelope = runtime.eventing.envelopes.message(
      def,
      data,
      streamIdOf('job', jobId),
      originOf(chainOf(def, jobId)),
    );
    await runtime.eventing.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  /** A v1 job (terms only): submitted, then funded — as the gateway and settlement announce it. */
  const fund = async (job: PayloadOf<typeof JobFunded>) => {
    await publish(JobSubmittedV1, submittedV1(job), job.jobId);
    await publish(JobFunded, job, job.jobId);
  };

  /** Lets deadlines pass whenever a round of `jobId` waits only on silent edges, until `done`. */
  const driveRounds = async (jobId: string, done: () => boolean) => {
    const status = () => runtime.engine.status(jobId);
    const expired = new Set<string>();
    const onlySilentLeft = () => {
      const s = status();
      if (done()) return true;
      if (s?.status !== 'reserving' || !s.round || expired.has(s.round.roundId))
        return s?.status === 'waiting';
      const round = s.round;
      return round.targets.every(
        (t) => round.accepted.includes(t.reservationId) || behaviour.get(t.providerId) === 'silent',
      );
    };
    for (let i = 0; i < 8 && !done(); i++) {
      await waitFor(onlySilentLeft, {
        timeoutMs: 10_000,
        description: `a round of ${jobId} waiting only on silent edges`,
      });
      const round = status()?.round;
      if (status()?.status === 'reserving' && round) {
        expired.add(round.roundId); // its deadline passes: the next round is another
        clock.advance(2_000);
      }
    }
  };

  /** A replica booted with `runService`, the production boot. */
  const startReplica = async (): Promise<Replica> => {
    const { service, eventing } = await runScheduler({
      pg,
      nats,
      clock,
      onError: (e, c) => errors.push(`${c}: ${String(e)}`),
    });
    return {
      service,
      eventing,
      engine: service.app.get<PlacementEngine>(PLACEMENT_ENGINE),
      leadership: service.app.get<PlacerLeadership>(PLACER_LEADERSHIP),
      openJobs: service.app.get<OpenJobsRepository>(OPEN_JOBS),
    };
  };

  beforeAll(async () => {
    pg = await usePostgres({ label: 'scheduler' });
    nats = await useNats({ label: 'scheduler' });
    runtime = await startReplica();
    // Discovery's candidate query: every test edge not excluded, with its free GPUs.
    subscriptions.push(
      ...serveDiscoveryAndCollect(
        nats,
        () => [...behaviour.keys()].map((id) => [id, gpus.get(id) ?? 0] as const),
        (uuid) => [...heldGpus.values()].some((held) => held.includes(uuid)),
        events,
      ),
    );
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    await runtime?.service.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it('four edges, one declines and one never answers → placed on the other two; nothing else is held', async () => {
    const [a, b, c, d] = [edgeId('A'), edgeId('B'), edgeId('C'), edgeId('D')];
    await addEdge(a, 'accept');
    await addEdge(b, 'decline');
    await addEdge(c, 'silent');
    await addEdge(d, 'accept');
    await fund(fundedJob({ jobId: 'job-int-1', gpus: 4 }));
    await waitFor(() => runtime.engine.status('job-int-1'), {
      timeoutMs: 10_000,
      description: 'job-int-1 consumed',
    });
    await driveRounds('job-int-1', () => runtime.engine.status('job-int-1')?.status === 'placed');
    const placed = await events.waitFor(
      (e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === 'job-int-1',
      {
        timeoutMs: 10_000,
      },
    );
    const nodes = (placed.data as PayloadOf<typeof JobPlaced>).allocations.flatMap((x) => x.nodes);
    expect(nodes.map((n) => n.providerId).sort()).toEqual([a, d]);
    // Every reservation an edge accepted is either part of the placement or was released.
    await waitFor(() => holds.size === nodes.length, {
      timeoutMs: 10_000,
      description: 'only the placed reservations held',
    });
    expect([...holds.keys()].sort()).toEqual(nodes.map((n) => n.reservationId).sort());
    // The job's own stream has its history: queued, (requeued), placed.
    // The job's own stream has its history: the decisions and what was announced of them, caused
    // by the funding (its chain carried on) or by the commands that followed.
    const history = await runtime.eventing.store.readStream(streamIdOf('job', 'job-int-1'));
    expect(history.map((e) => e.type)).toEqual(expect.arrayContaining(['Queued', 'RoundStarted', 'Placed']));
    const announced = history.filter((e) => e.type.startsWith('job.')).map((e) => e.type);
    expect(announced.at(-1)).toBe('job.placed');
    expect(announced.slice(0, -1).every((type) => type === 'job.queued')).toBe(true);
    // Funded after its submission: the funding's chain, its first decision caused by the funding.
    const funding = chainOf(JobFunded, 'job-int-1');
    expect(new Set(history.map((e) => e.correlationId))).toEqual(new Set([funding]));
    expect(history[0]!.causationId).not.toBe(funding);
    expect(history.every((e) => e.causationId !== null)).toBe(true);
    expect(placed.correlationId).toBe(funding);
    expect(await runtime.openJobs.openJobIds()).not.toContain('job-int-1');
    // Why there: the explanation of the round that placed it, as the scheduler's query serves it.
    const { explanation } = await runtime.eventing.client.ask(GetPlacementExplanation, {
      jobId: 'job-int-1',
    });
    expect(explanation).toMatchObject({
      jobId: 'job-int-1',
      status: 'placed',
      outcome: { kind: 'placement' },
    });
    if (explanation?.outcome.kind !== 'placement') throw new Error('no placement explained');
    const [why] = explanation.outcome.allocations;
    expect(why!.nodes.map((n) => n.providerId).sort()).toEqual([a, d]);
    expect(why!.prediction.stepUs).toBeCloseTo(why!.prediction.computeUs + why!.prediction.commUs);
    expect(why!.gpus).toHaveLength(4);
    // Two providers, each its own site: one wide-area pair, on the snapshot's figures.
    expect(why!.links).toHaveLength(1);
    expect(why!.links[0]).toMatchObject({ scope: 'inter-site', relayed: false });
    expect(explanation.attempt).toBe(runtime.engine.status('job-int-1')!.attempt);
    expect(
      (await runtime.eventing.client.ask(GetPlacementExplanation, { jobId: 'job-never-seen' })).explanation,
    ).toBeNull();
    for (const id of [a, b, c, d]) behaviour.set(id, 'decline'); // retire the edges for the next test
    for (const id of [a, b, c, d]) gpus.set(id, 0);
  });

  it('an edge that never answers → the round times out, every accepted reservation is released, the job waits', async () => {
    const [e, f] = [edgeId('E'), edgeId('F')];
    await addEdge(e, 'accept');
    await addEdge(f, 'silent');
    await fund(fundedJob({ jobId: 'job-int-2', tenantId: 'tenant-b', gpus: 4 }));
    await waitFor(() => runtime.engine.status('job-int-2'), {
      timeoutMs: 10_000,
      description: 'job-int-2 consumed',
    });
    await driveRounds('job-int-2', () => runtime.engine.status('job-int-2')?.status === 'waiting');
    const requeued = await events.waitFor(
      (x) =>
        x.type === 'job.queued' &&
        (x.data as { jobId: string; reason: string | null }).jobId === 'job-int-2' &&
        /no answer before the deadline/.test((x.data as { reason: string | null }).reason ?? ''),
      { timeoutMs: 10_000 },
    );
    expect((requeued.data as { attempt: number }).attempt).toBe(2);
    expect(reserved.filter((r) => r.edge === e).length).toBeGreaterThan(0);
    await waitFor(() => [...holds.values()].every((edge) => edge !== e), {
      timeoutMs: 10_000,
      description: "edge E's accepted reservation released",
    });
    expect(runtime.engine.status('job-int-2')?.status).toBe('waiting');
    expect(await runtime.openJobs.openJobIds()).toEqual(['job-int-2']);
  });

  it('a restarted scheduler goes on with the jobs still owed a decision, and only those, from their streams', async () => {
    const before = runtime.engine.status('job-int-2');
    await runtime.service.close();
    runtime = await startReplica();
    // The waiting job's history survived: the same attempt, the providers it left out.
    expect(runtime.engine.status('job-int-2')).toEqual(before);
    expect(runtime.engine.status('job-int-1')).toBeUndefined();
  });

  it('a second replica stands by (consumes and places nothing) and takes over when the active one goes', async () => {
    expect(runtime.leadership.isLeading()).toBe(true);
    expect(runtime.service.transport?.consuming).toBe(true);
    const standby = await startReplica();
    try {
      expect(standby.leadership.isLeading()).toBe(false);
      expect(standby.service.transport?.consuming).toBe(false);
      expect(standby.engine.status('job-int-2')).toBeUndefined();
      await runtime.service.close();
      // The standby retries on its (fake) clock; the lock went with the closed replica's connection.
      await waitFor(
        () => {
          clock.advance(5_000);
          // It goes on with the open jobs it read first, then leads.
          return standby.leadership.isLeading() && standby.engine.status('job-int-2') !== undefined;
        },
        { timeoutMs: 10_000, description: 'the standby takes the placer lease and queues the open job' },
      );
      await waitFor(() => standby.service.transport?.consuming, {
        timeoutMs: 10_000,
        description: 'the new leader consumes',
      });
    } finally {
      runtime = standby;
    }
  });

  it('concurrent jobs exceeding capacity → queued with the core’s reasons → placed as capacity frees', async () => {
    // The job left waiting by the earlier tests is cancelled, so that it competes for nothing here.
    await publish(
      JobCancelled,
      { jobId: 'job-int-2', usage: [], cancelledAt: clock.now().toISOString() },
      'job-int-2',
    );
    await waitFor(() => runtime.engine.status('job-int-2')?.status === 'cancelled', {
      timeoutMs: 10_000,
      description: 'job-int-2 cancelled',
    });
    for (const id of [edgeId('E'), edgeId('F')]) gpus.set(id, 0); // retire the earlier edges
    const [g, h] = [edgeId('G'), edgeId('H')];
    await addEdge(g, 'accept', 2);
    await addEdge(h, 'accept', 2);
    // Each job: two ranks of one H100, 1 core and 2 GiB each, on one node — a whole edge.
    const spec = parseEnsembleSpecOrThrow(`apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: two-ranks }
max_duration: 1h
allocations:
  main:
    execution: { image: ghcr.io/example/train:1.0, cmd: [python, train.py] }
    resources:
      cpu: { cores: 1 }
      ram: { size: 2GiB }
      gpus: { count: 2, models: [H100] }
    distributed: { framework: torchrun, gpus_per_rank: 1, max_nodes: 1 }
`);
    const ids = ['job-int-3a', 'job-int-3b', 'job-int-3c'];
    await Promise.all(
      ids.map(async (jobId, i) => {
        const funded = fundedJob({ jobId, tenantId: `tenant-3${i}`, gpus: 2 });
        const submitted = { ...submittedV1(funded), spec };
        // Either order: the last job's funding arrives before its submission.
        if (i === 2) await publish(JobFunded, funded, jobId);
        await publish(JobSubmitted, submitted, jobId);
        if (i !== 2) await publish(JobFunded, funded, jobId);
      }),
    );
    const placedOf = (jobId: string) =>
      events.items.find((e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === jobId);
    await waitFor(
      () =>
        ids.filter((id) => placedOf(id)).length === 2 &&
        ids.some((id) => runtime.engine.status(id)?.status === 'waiting'),
      { timeoutMs: 15_000, description: 'two jobs placed, one waiting for capacity' },
    );
    const waiting = ids.find((id) => !placedOf(id))!;
    const queued = await events.waitFor(
      (e) =>
        e.type === 'job.queued' &&
        (e.data as { jobId: string }).jobId === waiting &&
        (e.data as { reason: string | null }).reason !== null,
      { timeoutMs: 10_000 },
    );
    expect((queued.data as { reason: string }).reason).toMatch(/2 GPUs asked/);
    // Every placed node holds whole ranks and reserved what its ranks need.
    const first = placedOf(ids.find((id) => id !== waiting)!)!;
    const [node] = (first.data as PayloadOf<typeof JobPlaced>).allocations[0]!.nodes;
    expect(node!.ranks).toBe(2);
    expect(reserved.find((r) => r.reservationId === node!.reservationId)!.request).toMatchObject({
      cpuMillicores: 2_000,
      memoryBytes: 4 * 1024 ** 3,
      image: 'ghcr.io/example/train:1.0',
      maxDurationMs: 3_600_000,
    });
    // The first job ends: its edge drops the reservation and discovery announces it.
    holds.delete(node!.reservationId);
    heldGpus.delete(node!.reservationId);
    const changed = runtime.eventing.envelopes.message(
      ProviderReservationsChanged,
      { providerId: node!.providerId, sequence: 1, at: clock.now().toISOString(), reservations: [] },
      streamIdOf('provider', node!.providerId),
      originOf(`reservations-of-${node!.providerId}`),
    );
    await runtime.eventing.nats.js.publish(
      ProviderReservationsChanged.subject(undefined, nats.prefix),
      JSON.stringify(changed),
      { msgID: changed.eventId },
    );
    const placed = await events.waitFor(
      (e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === waiting,
      { timeoutMs: 15_000 },
    );
    const nodes = (placed.data as PayloadOf<typeof JobPlaced>).allocations.flatMap((a) => a.nodes);
    expect(nodes.map((n) => n.providerId)).toEqual([node!.providerId]);
    // Funded before its submission: still the funding's chain on everything said of the job.
    const third = events.items.filter((e) => (e.data as { jobId: string }).jobId === 'job-int-3c');
    expect(third.length).toBeGreaterThan(0);
    expect(third.every((e) => e.correlationId === chainOf(JobFunded, 'job-int-3c'))).toBe(true);
    expect(await runtime.openJobs.openJobIds()).toEqual([]);
  });

  it('a job queued longer than the maximum wait → job.unschedulable with the last reasons, no longer owed', async () => {
    const funded = fundedJob({ jobId: 'job-int-4', tenantId: 'tenant-4', gpus: 8 });
    const spec = parseEnsembleSpecOrThrow(`apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: eight-on-one }
max_duration: 1h
allocations:
  main:
    execution: { image: ghcr.io/example/train:1.0, cmd: [python, train.py] }
    resources: { cpu: { cores: 1 }, ram: { size: 1GiB }, gpus: { count: 8 } }
`);
    await publish(JobSubmitted, { ...submittedV1(funded), spec }, 'job-int-4');
    await publish(JobFunded, funded, 'job-int-4');
    await waitFor(() => runtime.engine.status('job-int-4')?.status === 'waiting', {
      timeoutMs: 10_000,
      description: 'job-int-4 waiting for 8 GPUs on one node',
    });
    const waiting = (await runtime.eventing.client.ask(GetPlacementExplanation, { jobId: 'job-int-4' }))
      .explanation;
    expect(waiting).toMatchObject({
      status: 'waiting',
      outcome: { kind: 'failure', code: 'Unschedulable', message: expect.stringMatching(/^8 GPUs asked/) },
    });
    expect(await runtime.openJobs.openJobIds()).toEqual(['job-int-4']);
    clock.advance(3_600_000); // the default maximum wait
    const e = await events.waitFor(
      (x) => x.type === 'job.unschedulable' && (x.data as { jobId: string }).jobId === 'job-int-4',
      { timeoutMs: 10_000 },
    );
    const data = e.data as { code: string; message: string; reasons: unknown[] };
    expect(data.code).toBe('Unschedulable');
    expect(data.message).toMatch(/^queued longer than the maximum wait of 1 h; last: 8 GPUs asked/);
    expect(data.reasons.length).toBeGreaterThan(0);
    await waitFor(async () => (await runtime.openJobs.openJobIds()).length === 0, {
      timeoutMs: 10_000,
      description: 'job-int-4 no longer owed a decision',
    });
    // Committed with the decision: the explanation says why it never ran.
    const final = (await runtime.eventing.client.ask(GetPlacementExplanation, { jobId: 'job-int-4' }))
      .explanation;
    expect(final).toMatchObject({
      status: 'unschedulable',
      outcome: { kind: 'failure', code: 'Unschedulable', message: data.message },
    });
    if (final?.outcome.kind !== 'failure') throw new Error('no failure explained');
    expect(final.outcome.reasons).toEqual(data.reasons);
  });
});
