import {
  buildEnvelope,
  type Envelope,
  foldEvents,
  JobCancelRequested,
  type JobCompleted,
  JobPlaced,
  JobSubmitted,
  type MessageDefinition,
  newEventId,
  ProviderRegistered,
  RankStatusReported,
  type PayloadOf,
  prefixSubject,
} from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import {
  EventCollector,
  FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
  serviceConnection,
} from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { Writable } from 'node:stream';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { type RunningService, runService } from '@gpunet/service-runtime';
import { createLogger } from '@gpunet/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionModule } from '../src/app/execution.module';
import type { ProviderDirectory } from '../src/app/provider-directory.port';
import type { RankNetwork } from '../src/app/rank-network.port';
import { HostRankNetwork } from '../src/infra/host-rank-network';
import { type ExecutionEvent, jobExecutionDecider } from '../src/domain/job-execution.decider';
import { edgeId, placementOf, providerRegistered, specOf } from './support/fixtures';
import { tagOf } from './support/edge-keys';
import { TestEdge } from './support/test-edge';

const TIMEOUT = { timeoutMs: 30_000 };
const POLICY = {
  barrierMs: 60_000,
  heartbeatTimeoutMs: 3_600_000,
  usageReportMs: 30_000,
  stopWaitMs: 20_000,
};

/**
 * Execution against real NATS and Postgres: submissions, placements and cancel requests arrive on
 * JetStream, test doubles of the edges answer start/stop/release on core NATS and publish rank
 * statuses on EDGE_RANKS; deadlines run on a FakeClock; the job's events leave through the outbox.
 */
describe('execution (NATS + Postgres)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let service: RunningService;
  let eventing: EventingRuntime;
  const clock = new FakeClock('2030-01-01T00:00:00Z');
  const errors: string[] = [];
  const events = new EventCollector<Envelope>('execution events');
  const subscriptions: Subscription[] = [];
  const edges = new Map<string, TestEdge>();
  /**
   * Jobs whose next network teardown waits until the test lets it go: `entered` resolves when the
   * teardown started, `release()` lets it finish. A release effect tears the network down before it
   * marks the job released, so this holds a release in flight.
   */
  const heldTeardowns = new Map<string, { entered: () => void; gate: Promise<void> }>();
  const holdNextTeardown = (jobId: string) => {
    let entered!: () => void;
    let release!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    heldTeardowns.set(jobId, { entered, gate });
    return { started, release };
  };
  const gatedNetwork = (directory: ProviderDirectory): RankNetwork => {
    const host = new HostRankNetwork(directory);
    return {
      prepare: (job, nodes) => host.prepare(job, nodes),
      teardown: async (jobId) => {
        const held = heldTeardowns.get(jobId);
        if (held) {
          heldTeardowns.delete(jobId);
          held.entered();
          await held.gate;
        }
        await host.teardown();
      },
    };
  };

  const edge = (letter: string): TestEdge => {
    const id = edgeId(letter);
    let e = edges.get(id);
    if (!e) {
      e = new TestEdge(id, nats.nc, jetstream(nats.nc), nats.prefix, () => clock.now());
      edges.set(id, e);
    }
    return e;
  };

  const publish = async <D extends MessageDefinition>(
    def: D,
    data: PayloadOf<D>,
    streamId: string,
    init: { eventId?: string; correlationId?: string; causationId?: string } = {},
  ) => {
    const envelope = buildEnvelope(def, data as never, { ...init, streamId });
    await eventing.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
    return envelope;
  };

  const submit = (jobId: string, spec: NormalizedSpec, eventId?: string) =>
    publish(
      JobSubmitted,
      {
        jobId,
        tenantId: 'tenant-a',
        subnetId: 'public',
        asset: 'USDC',
        gpus: 2,
        gpuClasses: ['H100-80GB'],
        maxPricePerGpuHour: '9000000',
        maxDurationSeconds: 3600,
        submittedAt: clock.now().toISOString(),
        spec,
      },
      `job-${jobId}`,
      eventId === undefined ? {} : { eventId },
    );

  /** `submission`: the submission's id when the placement follows from it (its correlation and cause). */
  const place = (jobId: string, on: readonly TestEdge[], submission?: string) =>
    publish(
      JobPlaced,
      {
        jobId,
        tenantId: 'tenant-a',
        asset: 'USDC',
        allocations: placementOf(on.map((e) => e.id)).map((a) => ({
          ...a,
          nodes: a.nodes.map((n) => ({ ...n, reservationId: `${jobId}-${n.reservationId}` })),
        })),
        holdUntil: '2030-01-01T00:05:00.000Z',
        attempt: 1,
        at: clock.now().toISOString(),
      },
      `job-${jobId}`,
      submission === undefined ? {} : { correlationId: submission, causationId: submission },
    );

  const event = (
    jobId: string,
    type: string,
    where: (data: Record<string, unknown>) => boolean = () => true,
  ) =>
    events.waitFor(
      (e) => e.type === type && (e.data as { jobId: string }).jobId === jobId && where(e.data as never),
      {
        ...TIMEOUT,
      },
    );

  const ofJob = (jobId: string) =>
    events.items.filter((e) => (e.data as { jobId?: string }).jobId === jobId).map((e) => e.type);

  /** Advances the fake clock a tick at a time until `done`. */
  const advanceUntil = (done: () => boolean, stepMs = 1_000, description = 'the awaited state') =>
    waitFor(
      () => {
        if (done()) return true;
        clock.advance(stepMs);
        return false;
      },
      { ...TIMEOUT, intervalMs: 20, description },
    );

  const reservationsOf = (jobId: string, on: readonly TestEdge[]) =>
    on.map((e) => `${jobId}-res-${tagOf(e.id, 6)}`);

  /** The production boot (`runService`), on the test's schema, prefix and fake clock. */
  const startApp = async () => {
    service = await runService({
      name: 'execution',
      module: ({ metrics }) =>
        ExecutionModule.forRoot({
          config: {
            ...serviceConnection(pg, nats),
            policy: POLICY,
            tickMs: 1_000,
            edgeTimeoutMs: 1_000,
            stopGraceMs: 1_000,
            network: { kind: 'host' },
          },
          clock,
          metrics,
          network: gatedNetwork,
          onError: (e, c) => errors.push(`${c}: ${String(e)}`),
        }),
      handleSignals: false,
      env: {},
      logger: createLogger({
        service: 'execution',
        destination: new Writable({ write: (_c, _e, done) => done() }),
      }),
    });
    eventing = service.app.get<EventingRuntime>(EVENTING);
  };

  beforeAll(async () => {
    pg = await usePostgres({ label: 'execution' });
    nats = await useNats({ label: 'execution' });
    await startApp();
    subscriptions.push(
      nats.nc.subscribe(prefixSubject(nats.prefix, 'execution.>'), {
        callback: (_e: unknown, msg: Msg) => events.push(msg.json<Envelope>()),
      }),
    );
  });

  afterAll(async () => {
    for (const s of subscriptions) s.unsubscribe();
    for (const e of edges.values()) e.close();
    await service?.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it('placed (before its submission) → launching → running → all exit 0 → usage, job.completed, reservations released', async () => {
    const [a, b] = [edge('A'), edge('B')];
    // As the scheduler places: the placement carries the submission's correlation, and it can reach
    // execution before the submission does (two consumers, either may decide first).
    const submissionId = newEventId();
    await place('job-ok', [a, b], submissionId);
    const submission = await submit('job-ok', specOf({ gpus: 2 }), submissionId);
    const launching = await event('job-ok', 'job.launching');
    expect(launching.data).toMatchObject({ attempt: 1, worldSize: 2, masterPort: 29500 });
    await event('job-ok', 'job.running');
    const start = a.startRequests.find((c) => c.jobId === 'job-ok')!;
    expect(start.env).toMatchObject({ RANK: '0', WORLD_SIZE: '2', CUDA_VISIBLE_DEVICES: 'GPU-AAAA-0' });
    expect(start.env['MASTER_ADDR']).toBe((launching.data as { masterAddr: string }).masterAddr);
    // Honest edges: they report what execution sees on its clock.
    clock.advance(40_000);
    await a.exit('job-ok', 1, 0, 0, 40);
    await waitFor(() => ofJob('job-ok').includes('rank.exited'), TIMEOUT);
    clock.advance(2_000);
    await b.exit('job-ok', 1, 1, 0, 42);
    const completed = await event('job-ok', 'job.completed');
    expect((completed.data as PayloadOf<typeof JobCompleted>).usage).toEqual([
      { providerId: a.id, gpuClass: 'H100-80GB', gpus: 1, gpuSeconds: 40 },
      { providerId: b.id, gpuClass: 'H100-80GB', gpus: 1, gpuSeconds: 42 },
    ]);
    await waitFor(() => a.released.length + b.released.length === 2, {
      ...TIMEOUT,
      description: 'both released',
    });
    expect([...a.released, ...b.released].sort()).toEqual(reservationsOf('job-ok', [a, b]).sort());
    expect(a.createdFor('job-ok') + b.createdFor('job-ok')).toBe(2);
    // Every event of the job carries the submission's correlation, and each names its cause.
    const published = events.items.filter((e) => (e.data as { jobId?: string }).jobId === 'job-ok');
    expect(new Set(published.map((e) => e.correlationId))).toEqual(new Set([submission.correlationId]));
    expect(published.filter((e) => !e.causationId)).toEqual([]);
  });

  it('a rank exits non-zero (restart_all, maxRestarts 1) → stop-ranks, attempt 2 → completes; usage counts both attempts’ wall time', async () => {
    const [a, b] = [edge('C'), edge('D')];
    await submit('job-restart', specOf({ gpus: 2, strategy: 'restart_all', maxRestarts: 1 }));
    await place('job-restart', [a, b]);
    await event('job-restart', 'job.running');
    b.stoppedWallSeconds = 5;
    clock.advance(5_000);
    await a.exit('job-restart', 1, 0, 1, 5);
    const restarting = await event('job-restart', 'job.restarting');
    expect(restarting.data).toMatchObject({ attempt: 2, reason: { code: 'RANK_FAILED' } });
    await event('job-restart', 'job.launching', (d) => d['attempt'] === 2);
    await event('job-restart', 'job.running', (d) => d['attempt'] === 2);
    expect(
      b.stopRequests.some((s) => s.jobId === 'job-restart' && s.attempt === 1 && s.reason === 'restart'),
    ).toBe(true);
    clock.advance(20_000);
    await a.exit('job-restart', 2, 0, 0, 20);
    await b.exit('job-restart', 2, 1, 0, 20);
    const completed = await event('job-restart', 'job.completed');
    expect((completed.data as { usage: unknown }).usage).toMatchObject([
      { providerId: a.id, gpuSeconds: 25 },
      { providerId: b.id, gpuSeconds: 25 },
    ]);
    // A non-zero exit is the job's own code failing, not the provider's fault (a rank killed on its
    // host is: see the decider's unit tests).
    expect((completed.data as PayloadOf<typeof JobCompleted>).faults).toEqual([]);
    // One process per (attempt, rank): two ranks, two attempts.
    expect(a.createdFor('job-restart') + b.createdFor('job-restart')).toBe(4);
  });

  it('the start barrier passes with a rank not started → stop all, release, job.failed START_BARRIER', async () => {
    const [a, silent] = [edge('E'), edge('F')];
    silent.mode = 'silent';
    await submit('job-barrier', specOf({ gpus: 2 }));
    await place('job-barrier', [a, silent]);
    await event('job-barrier', 'job.launching');
    await waitFor(() => a.ranks.has(TestEdge.key('job-barrier', 1, 0)), TIMEOUT);
    // The silent edge answers stops and releases, never a start.
    await advanceUntil(() => ofJob('job-barrier').includes('job.failed'), 5_000, 'job-barrier failed');
    const failed = await event('job-barrier', 'job.failed');
    expect(failed.data).toMatchObject({ reason: { code: 'START_BARRIER' } });
    expect(a.stopRequests.some((s) => s.jobId === 'job-barrier' && s.reason === 'start-barrier')).toBe(true);
    await waitFor(() => a.released.includes(reservationsOf('job-barrier', [a])[0]!), TIMEOUT);
    await waitFor(() => silent.released.includes(reservationsOf('job-barrier', [silent])[0]!), TIMEOUT);
  });

  it('cancel while running → stop-ranks on every edge, job.cancelled with the usage, reservations released', async () => {
    const [a, b] = [edge('G'), edge('H')];
    await submit('job-cancel', specOf({ gpus: 2 }));
    await place('job-cancel', [a, b]);
    await event('job-cancel', 'job.running');
    a.stoppedWallSeconds = 9;
    b.stoppedWallSeconds = 9;
    clock.advance(9_000);
    await publish(
      JobCancelRequested,
      {
        jobId: 'job-cancel',
        tenantId: 'tenant-a',
        reason: 'changed my mind',
        requestedAt: clock.now().toISOString(),
      },
      'job-job-cancel',
    );
    const cancelled = await event('job-cancel', 'job.cancelled');
    for (const e of [a, b])
      expect(e.stopRequests.some((s) => s.jobId === 'job-cancel' && s.reason === 'cancelled')).toBe(true);
    expect((cancelled.data as { usage: unknown }).usage).toMatchObject([
      { gpuSeconds: 9 },
      { gpuSeconds: 9 },
    ]);
    await waitFor(() => a.released.length === 1 && b.released.length === 1, {
      ...TIMEOUT,
      description: 'released',
    });
    expect([...a.ranks.values(), ...b.ranks.values()].every((r) => r.state === 'exited')).toBe(true);
  });

  it('cancel before placement → job.cancelled with no usage; the later placement is released, nothing starts', async () => {
    const a = edge('I');
    await submit('job-early', specOf({ gpus: 1 }));
    await publish(
      JobCancelRequested,
      { jobId: 'job-early', tenantId: 'tenant-a', reason: null, requestedAt: clock.now().toISOString() },
      'job-job-early',
    );
    const cancelled = await event('job-early', 'job.cancelled');
    expect((cancelled.data as { usage: unknown }).usage).toEqual([]);
    await place('job-early', [a]);
    await waitFor(() => a.released.length === 1, { ...TIMEOUT, description: 'the late placement released' });
    expect(a.startRequests.filter((c) => c.jobId === 'job-early')).toEqual([]);
  });

  it('a placement recorded while the cancelled job’s release is still in flight gets a release of its own', async () => {
    const a = edge('R');
    await submit('job-race', specOf({ gpus: 1 }));
    // The cancel's release (it covers no reservation: nothing was placed) is held before it marks
    // the job released; the placement is recorded meanwhile.
    const held = holdNextTeardown('job-race');
    await publish(
      JobCancelRequested,
      { jobId: 'job-race', tenantId: 'tenant-a', reason: null, requestedAt: clock.now().toISOString() },
      'job-job-race',
    );
    await event('job-race', 'job.cancelled');
    await held.started;
    await place('job-race', [a]);
    await waitFor(() => a.released.length === 1, {
      ...TIMEOUT,
      description: 'the placement released while the first release is held',
    });
    held.release();
    await waitFor(
      async () =>
        (
          await eventing.db.read<{ active: boolean }>(
            `SELECT active FROM "${pg.schema}".jobs WHERE job_id = 'job-race'`,
          )
        )[0]?.active === false,
      { ...TIMEOUT, description: 'job-race released and no longer active' },
    );
    expect(a.released).toHaveLength(1);
    expect(a.startRequests.filter((c) => c.jobId === 'job-race')).toEqual([]);
  });

  it('max duration → stop-ranks on every provider, job.failed MAX_DURATION', async () => {
    const [a, b] = [edge('J'), edge('K')];
    await submit('job-long', specOf({ gpus: 2, maxDuration: '10m' }));
    await place('job-long', [a, b]);
    await event('job-long', 'job.running');
    await advanceUntil(() => ofJob('job-long').includes('job.failed'), 30_000, 'job-long failed');
    const failed = await event('job-long', 'job.failed');
    expect(failed.data).toMatchObject({ reason: { code: 'MAX_DURATION' } });
    for (const e of [a, b])
      expect(e.stopRequests.some((s) => s.jobId === 'job-long' && s.reason === 'max-duration')).toBe(true);
    await waitFor(() => a.released.length === 1 && b.released.length === 1, {
      ...TIMEOUT,
      description: 'released',
    });
  });

  it('the service restarted mid-job (a start reply lost) → the job still completes, no rank is started twice', async () => {
    const [a, b] = [edge('L'), edge('M')];
    b.mode = 'hold'; // b creates its rank but the reply never reaches the service
    await submit('job-crash', specOf({ gpus: 2 }));
    await place('job-crash', [a, b]);
    await event('job-crash', 'job.launching');
    await waitFor(() => a.createdFor('job-crash') === 1 && b.createdFor('job-crash') === 1, TIMEOUT);
    await service.close();
    b.mode = 'normal';
    await startApp();
    // The restarted service re-sends the start it is unsure about; the edge recognises it.
    await waitFor(() => b.startRequests.filter((c) => c.jobId === 'job-crash').length >= 2, {
      ...TIMEOUT,
      description: 'the start re-sent after the restart',
    });
    await event('job-crash', 'job.running');
    await a.exit('job-crash', 1, 0, 0, 30);
    await b.exit('job-crash', 1, 1, 0, 30);
    await event('job-crash', 'job.completed');
    expect(a.createdFor('job-crash')).toBe(1);
    expect(b.createdFor('job-crash')).toBe(1);
    expect(ofJob('job-crash').filter((t) => t === 'job.launching')).toHaveLength(1);
    await waitFor(() => a.released.length === 1 && b.released.length === 1, {
      ...TIMEOUT,
      description: 'released',
    });
    // The job's stream holds its whole history, public and private events at contiguous versions,
    // and the snapshot a decision reads is exactly its fold. One statement, one snapshot: a decision
    // still being recorded (the release) commits its events and the snapshot together.
    const [row] = await eventing.db.query<{
      state: unknown;
      version: number;
      log: { type: string; data: unknown; version: number }[];
    }>(
      `SELECT s.state, s.version,
              (SELECT json_agg(json_build_object('type', e.type, 'data', e.data, 'version', e.stream_version)
                               ORDER BY e.stream_version)
                 FROM "${pg.schema}".events e WHERE e.stream_id = s.stream_id) AS log
         FROM "${pg.schema}".snapshots s WHERE s.stream_id = 'job-job-crash'`,
    );
    const log = row!.log;
    expect(log.map((e) => e.version)).toEqual(log.map((_e, i) => i + 1));
    expect(log.map((e) => e.type)).toEqual(
      expect.arrayContaining(['execution.job-accepted', 'job.launching']),
    );
    expect(row!.version).toBe(log.length);
    expect(row!.state).toEqual(
      foldEvents(
        jobExecutionDecider(POLICY),
        log.map(({ type, data }) => ({ type, data }) as ExecutionEvent),
      ),
    );
  });

  it('a status from an edge the rank is not on is ignored', async () => {
    const [a, b] = [edge('N'), edge('O')];
    await submit('job-spoof', specOf({ gpus: 2 }));
    await place('job-spoof', [a, b]);
    await event('job-spoof', 'job.running');
    // Edge b claims that rank 0 (on a) failed: nothing happens.
    await b.publishAs(b.id, {
      edgeId: b.id,
      jobId: 'job-spoof',
      attempt: 1,
      rank: 0,
      state: 'exited',
      startedAt: clock.now().toISOString(),
      exitedAt: clock.now().toISOString(),
      exitCode: 1,
      signal: null,
      stopReason: null,
      wallSeconds: 1,
      reportedAt: clock.now().toISOString(),
    });
    await a.exit('job-spoof', 1, 0, 0, 3);
    await b.exit('job-spoof', 1, 1, 0, 3);
    await event('job-spoof', 'job.completed');
    expect(ofJob('job-spoof')).not.toContain('job.failed');
    expect(errors.filter((e) => !/timeout|TIMEOUT|503/i.test(e))).toEqual([]);
  });

  it('MASTER_ADDR is rank 0’s host address from discovery, the GPU class its model; garbage statuses are dead-lettered', async () => {
    const [r, t] = [edge('R'), edge('S')];
    await publish(
      ProviderRegistered,
      providerRegistered(r.id, '10.1.2.3', 'NVIDIA H100 80GB HBM3', ['GPU-RRRR-0']),
      r.id,
    );
    await publish(
      ProviderRegistered,
      providerRegistered(t.id, '10.1.2.4', 'NVIDIA GeForce RTX 4090', ['GPU-SSSS-0']),
      t.id,
    );
    // A hostile edge's bytes on its status subject: off contract, dead-lettered, nothing else happens.
    await eventing.nats.js.publish(
      RankStatusReported.subject({ edgeId: r.id }, nats.prefix),
      '{"data":{"rank":-1}}',
    );
    await waitFor(
      async () =>
        (
          await eventing.db.query(`SELECT 1 FROM "${pg.schema}".providers WHERE provider_id = ANY($1)`, [
            [r.id, t.id],
          ])
        ).length === 2,
      { ...TIMEOUT, description: 'both providers known' },
    );
    await submit('job-addr', specOf({ gpus: 2 }));
    await place('job-addr', [r, t]);
    const launching = await event('job-addr', 'job.launching');
    expect(launching.data).toMatchObject({
      masterAddr: '10.1.2.3',
      ranks: [
        { providerId: r.id, address: '10.1.2.3', gpuClass: 'H100-80GB' },
        { providerId: t.id, address: '10.1.2.4', gpuClass: 'NVIDIA-GeForce-RTX-4090' },
      ],
    });
    await waitFor(() => t.startRequests.some((c) => c.jobId === 'job-addr'), TIMEOUT);
    expect(t.startRequests.find((c) => c.jobId === 'job-addr')!.env).toMatchObject({
      MASTER_ADDR: '10.1.2.3',
      RANK: '1',
    });
    await event('job-addr', 'job.running');
    await r.exit('job-addr', 1, 0, 0, 1);
    await t.exit('job-addr', 1, 1, 0, 1);
    await event('job-addr', 'job.completed');
  });

  it('an edge that reports twice its real usage is paid what execution observed, and the dispute is recorded', async () => {
    const [liar, honest] = [edge('T'), edge('V')];
    liar.usageFactor = 2;
    await submit('job-liar', specOf({ gpus: 2 }));
    await place('job-liar', [liar, honest]);
    await event('job-liar', 'job.running');
    clock.advance(30_000);
    await liar.exit('job-liar', 1, 0, 0, 30);
    await honest.exit('job-liar', 1, 1, 0, 30);
    const disputed = await event('job-liar', 'usage.disputed');
    expect(disputed.data).toMatchObject({
      providerId: liar.id,
      attempt: 1,
      rank: 0,
      edgeSeconds: 60,
      observedSeconds: 30,
      paidSeconds: 30,
    });
    const completed = await event('job-liar', 'job.completed');
    expect((completed.data as PayloadOf<typeof JobCompleted>).usage).toMatchObject([
      { providerId: liar.id, gpuSeconds: 30 },
      { providerId: honest.id, gpuSeconds: 30 },
    ]);
    expect(ofJob('job-liar').filter((t) => t === 'usage.disputed')).toHaveLength(1);
  });

  it('a forged status (signed by another key, or not signed) is refused and dead-lettered; the job goes on', async () => {
    const [a, b] = [edge('W'), edge('X')];
    const dead: { errorCode: string; errorMessage?: string }[] = [];
    subscriptions.push(
      nats.nc.subscribe(prefixSubject(nats.prefix, 'dlq.>'), {
        callback: (_e: unknown, msg: Msg) => {
          dead.push(msg.json<Envelope<string, { errorCode: string }>>().data);
        },
      }),
    );
    await submit('job-forged', specOf({ gpus: 2 }));
    await place('job-forged', [a, b]);
    await event('job-forged', 'job.running');
    const forged = {
      edgeId: a.id,
      jobId: 'job-forged',
      attempt: 1,
      rank: 0,
      state: 'exited' as const,
      startedAt: clock.now().toISOString(),
      exitedAt: clock.now().toISOString(),
      exitCode: 0,
      signal: null,
      stopReason: null,
      wallSeconds: 3_600,
      reportedAt: clock.now().toISOString(),
    };
    // b signs a status on a's subject in a's name; then bytes that are no signature of a's.
    await b.publishAs(a.id, forged);
    await b.publishAs(a.id, forged, 'A'.repeat(86));
    await waitFor(() => dead.filter((d) => d.errorCode === 'RANK_STATUS_REJECTED').length === 2, {
      ...TIMEOUT,
      description: 'both forgeries dead-lettered',
    });
    expect(ofJob('job-forged')).not.toContain('rank.exited');
    clock.advance(10_000);
    await a.exit('job-forged', 1, 0, 0, 10);
    await b.exit('job-forged', 1, 1, 0, 10);
    const completed = await event('job-forged', 'job.completed');
    expect((completed.data as PayloadOf<typeof JobCompleted>).usage).toMatchObject([
      { providerId: a.id, gpuSeconds: 10 },
      { providerId: b.id, gpuSeconds: 10 },
    ]);
  });
});
