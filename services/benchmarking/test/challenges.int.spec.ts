import {
  buildEnvelope,
  type ChallengeCommitReply,
  type ChallengeOpenReply,
  DEFAULT_SUBNET_TRUST,
  type Envelope,
  GetProviderTrust,
  type GpuVerificationChanged,
  type InputOf,
  JobCancelled,
  JobFunded,
  JobPlaced,
  type OpenChallengeOnEdge,
  type PayloadOf,
  type ProviderChallenged,
  ProviderInventoryChanged,
  ProviderRegistered,
  ProviderReservationsChanged,
  type RunChallengeOnEdge,
} from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, askQuery } from '@gpunet/eventing';
import { EventCollector, FakeClock, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser } from '@nats-io/nkeys';
import type { Msg } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChallengeMath } from '../src/app/challenge-math';
import { ProviderBenchmarks } from '../src/app/provider-benchmarks.service';
import {
  publishDiscoveryEvent,
  registered,
  reservationsChanged,
  simulatedGpu,
} from './support/discovery-events';
import { type BenchmarkingUnderTest, startBenchmarking } from './support/harness';
import { publishEvent } from './support/publish-event';

/*
 * GPU challenges end to end on real NATS and Postgres: benchmarking as production boots it, edges
 * played by responders on their `cmd.edge.<id>.challenge.v1` / `.challenge-open.v1` subjects that
 * answer honestly, late, never, with a refusal or with a tampered opening. The message flow, the
 * replies, the timing (the verifier's real monotonic clock), the decider, Postgres and JetStream are
 * all real.
 *
 * MATH DOUBLE — until the challenge library (libs/edge-bench `challenge.api.ts`) lands, the arithmetic
 * is `TOY_MATH` below (sizes, openings, the check), and the responders compute against it (`toyRow`).
 * Every case in this file runs through it. Once the library is merged, the integrator removes
 * `challengeMath: TOY_MATH` from `startBenchmarking` and answers with the real edge agent's challenge
 * responder: the cases marked [REAL-LIBRARY] (an honest opening verifies; a tampered one is caught)
 * then prove the math itself and SWITCH TO THE REAL LIBRARY. The others — late, never, refused,
 * registration, simulated, spot checks, idle, the monotonic clock, the trust query, restart, dead
 * letters, changed hardware — test the flow and depend on the double only for the sizes they assert
 * (n = 64; deadlines 5 s / 10 ms), which become the real `sizeChallenge`'s.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const H100 = 'NVIDIA H100 80GB HBM3';
const T4 = 'Tesla T4';
/** The toy challenge's size: n = 64 always. */
const N = 64;

/** The toy product's row `i` for a seed (a stand-in for the seeded product's row). */
const toyRow = (seed: string, i: number, n: number): number[] => {
  const s = Number.parseInt(seed.slice(0, 6), 16);
  return Array.from({ length: n }, (_, j) => (s + 31 * i + 17 * j) % 997);
};

/**
 * MATH DOUBLE. Sizes every challenge at n = 64 with a deadline from the claimed figure — 5 s above
 * 100 TFLOPS (an H100's), 10 ms below (a T4's), so that a slow edge's real answer misses it — and
 * checks an opening's rows against `toyRow` (product and proofs unchecked).
 */
const TOY_MATH: ChallengeMath = {
  defaultPolicy: () => ({
    targetMs: 100,
    minN: 16,
    maxN: 16_384,
    slack: 2,
    allowanceMs: 0,
    hashBytesPerSecond: 1e9,
    openRows: 2,
  }),
  sizeChallenge: (tflops) => ({ n: N, deadlineMs: tflops > 100 ? 5_000 : 10 }),
  newOpening: (n, rows, randomBytes) => ({
    rows: [...randomBytes(rows)].map((b) => b % n),
    freivaldsSeed: Buffer.from(randomBytes(32)).toString('hex'),
  }),
  verifyOpening: ({ seed, n, rows, reply }) => {
    for (const [k, row] of reply.rows.entries()) {
      if (row.index !== rows[k])
        return { ok: false, kind: 'malformed', detail: `row ${k} is not the one asked` };
      const want = toyRow(seed, row.index, n);
      const j = want.findIndex((v, x) => row.values[x] !== v);
      if (j >= 0) return { ok: false, kind: 'wrong-row', detail: `row ${row.index} differs at column ${j}` };
    }
    return { ok: true };
  },
  challengeEntry: () => 0,
};

type Behaviour = 'honest' | 'late' | 'never' | 'refuses' | 'tampers' | 'skews';

interface Edge {
  readonly name: string;
  readonly id: string;
  readonly gpus: readonly string[];
  readonly model: string;
  readonly behaviour: Behaviour | null;
  readonly simulated: boolean;
}

describe('GPU challenges (NATS + Postgres, responders as edges)', () => {
  let svc: BenchmarkingUnderTest;
  /**
   * MONOTONIC DOUBLE: the verifier's clock is the real `performance.now()` plus `skewMs`, which only
   * the `skews` edge moves (before it answers): a fake business clock cannot time a real reply, this
   * one does, and lets a test move the verifier's own time without sleeping.
   */
  let skewMs = 0;
  const monotonicClock = { nowMs: () => performance.now() + skewMs };
  const clock = new FakeClock(new Date('2030-01-01T00:00:00.000Z'));
  const events = new EventCollector<Envelope>('benchmarking events');
  const commands = new EventCollector<{ edge: string; subject: string; data: unknown }>('challenge commands');
  const deadLetters = new EventCollector<Envelope>('dead letters');
  const edge = (
    name: string,
    behaviour: Behaviour | null,
    gpus: number,
    model = H100,
    simulated = false,
  ): Edge => {
    const id = createUser().getPublicKey();
    return {
      name,
      id,
      gpus: Array.from({ length: gpus }, (_, i) => `GPU-${name}-${i}`),
      model,
      behaviour,
      simulated,
    };
  };
  const honest = edge('honest', 'honest', 2);
  const late = edge('late', 'late', 1, T4);
  const never = edge('never', 'never', 1, T4);
  const refuses = edge('refuses', 'refuses', 1);
  const tampers = edge('tampers', 'tampers', 1);
  const simulated = edge('simulated', 'honest', 1, H100, true);
  const crashed = edge('crashed', null, 1);
  // Registered in its own case, so that its challenge runs alone.
  const skews = edge('skews', 'skews', 1);
  const edges = [honest, late, never, refuses, tampers, simulated, crashed, skews];
  const registeredAtStart = edges.filter((e) => e !== skews);
  const register = (e: Edge) =>
    publishDiscoveryEvent(
      jetstream(svc.nats.nc),
      svc.nats.prefix,
      ProviderRegistered,
      registered(e.id, {
        name: e.name,
        address: '127.0.0.1',
        gpus: e.gpus.map((uuid, i) => ({ ...simulatedGpu(i, e.model, 16 * 1024 ** 3), uuid })),
        simulated: e.simulated,
        at: clock.now().toISOString(),
      }),
    );
  const nameOf = (id: string) => edges.find((e) => e.id === id)?.name ?? id;
  const seeds = new Map<string, string>();

  const respond = (e: Edge, m: Msg): void => {
    const env = m.json<Envelope>();
    commands.push({ edge: e.name, subject: m.subject, data: env.data });
    if (m.subject.endsWith('.challenge.v1')) {
      const c = env.data as InputOf<typeof RunChallengeOnEdge>;
      seeds.set(c.challengeId, c.seed);
      const commit: ChallengeCommitReply =
        e.behaviour === 'refuses'
          ? { outcome: 'declined', challengeId: c.challengeId, code: 'UNKNOWN_GPU', message: 'no such GPU' }
          : { outcome: 'committed', challengeId: c.challengeId, root: 'c'.repeat(64), edgeComputeMs: 1 };
      if (e.behaviour === 'never') return;
      // The verifier's clock moves 6 s while the edge computes (the deadline is 5 s).
      if (e.behaviour === 'skews') skewMs += 6_000;
      // A slow device: its answer comes 50 ms later, past its 10 ms deadline.
      if (e.behaviour === 'late') setTimeout(() => m.respond(JSON.stringify(commit)), 50);
      else m.respond(JSON.stringify(commit));
      return;
    }
    const o = env.data as InputOf<typeof OpenChallengeOnEdge>;
    const seed = seeds.get(o.challengeId)!;
    const rows = o.rows.map((index) => ({ index, values: toyRow(seed, index, N), proof: [] }));
    if (e.behaviour === 'tampers') rows[0]!.values[5]! += 1;
    const reply: ChallengeOpenReply = { outcome: 'opened', challengeId: o.challengeId, rows, product: [] };
    m.respond(JSON.stringify(reply));
  };

  const ofType = <T>(type: string, id: string) =>
    events.items
      .filter((x) => x.type === type && (x.data as { providerId: string }).providerId === id)
      .map((x) => x.data as T);
  const challenged = (id: string) => ofType<PayloadOf<typeof ProviderChallenged>>('provider.challenged', id);
  const verification = (id: string) =>
    ofType<PayloadOf<typeof GpuVerificationChanged>>('gpu.verification-changed', id);
  const trust = (providerId: string) =>
    askQuery(svc.nats.nc, GetProviderTrust, { providerId }, { timeoutMs: 5_000, prefix: svc.nats.prefix });
  const settle = async (id: string, count: number) =>
    events.waitFor(() => challenged(id).length >= count && verification(id).length >= count + 1, {
      timeoutMs: 20_000,
      description: `${nameOf(id)}: ${count} challenge(s) published`,
    });

  beforeAll(async () => {
    svc = await startBenchmarking(
      'challenges',
      { challengeLateGraceMs: 1_000, challengeOpenTimeoutMs: 2_000 },
      clock,
      {
        challengeMath: TOY_MATH,
        monotonicClock,
      },
    );
    svc.nats.nc.subscribe(`${svc.nats.prefix}.benchmarking.>`, {
      callback: (_e, m) => events.push(m.json<Envelope>()),
    });
    svc.nats.nc.subscribe(`${svc.nats.prefix}.dlq.>`, {
      callback: (_e, m) => deadLetters.push(m.json<Envelope>()),
    });
    for (const e of edges) {
      if (e.behaviour === null) continue;
      svc.nats.nc.subscribe(`${svc.nats.prefix}.cmd.edge.${e.id}.challenge.v1`, {
        callback: (_x, m) => respond(e, m),
      });
      svc.nats.nc.subscribe(`${svc.nats.prefix}.cmd.edge.${e.id}.challenge-open.v1`, {
        callback: (_x, m) => respond(e, m),
      });
    }
    await svc.nats.nc.flush();
    for (const e of registeredAtStart) await register(e);
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
  });

  it('puts a registered provider’s GPUs at pending and a simulated one’s at simulated', async () => {
    for (const e of registeredAtStart)
      await events.waitFor(() => verification(e.id).length === 1, { description: `${e.name} registered` });
    expect(verification(honest.id)[0]).toMatchObject({
      cause: 'registered',
      challengeId: null,
      gpus: [
        { uuid: 'GPU-honest-0', status: 'pending' },
        { uuid: 'GPU-honest-1', status: 'pending' },
      ],
    });
    expect(verification(simulated.id)[0]).toMatchObject({
      cause: 'registered',
      gpus: [{ uuid: 'GPU-simulated-0', status: 'simulated' }],
    });
  });

  it('challenges each pending GPU: the honest edge passes, the late, silent, refusing and tampering ones fail with the evidence', async () => {
    // The crashed edge's challenge is the restart case's; keep it out of this tick.
    const tick = await svc.challenges.tick();
    expect(tick.challenged.map((c) => [nameOf(c.providerId), c.reason, c.gpuUuid]).sort()).toEqual(
      [
        ['crashed', 'registration', 'GPU-crashed-0'],
        ['honest', 'registration', 'GPU-honest-0'],
        ['late', 'registration', 'GPU-late-0'],
        ['never', 'registration', 'GPU-never-0'],
        ['refuses', 'registration', 'GPU-refuses-0'],
        ['tampers', 'registration', 'GPU-tampers-0'],
      ].sort(),
    );
    for (const e of [honest, late, never, refuses, tampers, crashed]) await settle(e.id, 1);

    // [REAL-LIBRARY] the honest opening verifies.
    const [pass] = challenged(honest.id);
    expect(pass).toMatchObject({
      outcome: 'passed',
      reason: 'registration',
      jobId: null,
      gpuUuid: 'GPU-honest-0',
    });
    expect(pass!.evidence).toMatchObject({
      n: N,
      dtype: 'fp16',
      claimedTflops: 742.1,
      deadlineMs: 5_000,
      failure: null,
    });
    expect(pass!.evidence.root).toBe('c'.repeat(64));
    expect(pass!.evidence.openedRows).toHaveLength(2);
    expect(pass!.evidence.elapsedMs).toBeLessThan(5_000);
    expect(pass!.evidence.bytesSent).toBeGreaterThan(100);
    // Received: the commitment and an opening of two 64-value rows.
    expect(pass!.evidence.bytesReceived).toBeGreaterThan(2 * N * 2);
    expect(verification(honest.id)[1]).toMatchObject({
      cause: 'challenge-passed',
      challengeId: pass!.challengeId,
      gpus: [
        { uuid: 'GPU-honest-0', status: 'verified' },
        { uuid: 'GPU-honest-1', status: 'pending' },
      ],
    });

    const failure = (id: string) => challenged(id)[0]!.evidence.failure?.kind;
    expect(failure(late.id)).toBe('late');
    // T4: 65 dense fp16 TFLOPS × 0.75, the reference figure placement uses.
    expect(challenged(late.id)[0]!.evidence).toMatchObject({
      claimedTflops: 48.8,
      deadlineMs: 10,
      root: 'c'.repeat(64),
    });
    expect(challenged(late.id)[0]!.evidence.elapsedMs).toBeGreaterThan(10);
    expect(failure(never.id)).toBe('no-answer');
    expect(challenged(never.id)[0]!.evidence).toMatchObject({
      elapsedMs: null,
      root: null,
      bytesReceived: 0,
    });
    expect(failure(refuses.id)).toBe('declined');
    expect(challenged(refuses.id)[0]!.evidence.failure!.detail).toContain('UNKNOWN_GPU');
    // [REAL-LIBRARY] a product with one wrong element is caught.
    expect(failure(tampers.id)).toBe('wrong-row');
    expect(challenged(tampers.id)[0]!.evidence.openedRows).toHaveLength(2);
    // Nobody listens on the crashed edge's subject: no answer.
    expect(failure(crashed.id)).toBe('no-answer');
    for (const e of [late, never, refuses, tampers])
      expect(verification(e.id)[1]).toMatchObject({
        cause: 'challenge-failed',
        gpus: [{ uuid: e.gpus[0], status: 'unverified' }],
      });

    const scores = events.items
      .filter((x) => x.type === 'provider.reliability-changed')
      .map((x) => x.data as { providerId: string; score: number; cause: string });
    expect(Object.fromEntries(scores.map((s) => [nameOf(s.providerId), [s.score, s.cause]]))).toEqual({
      honest: [0.85, 'challenge-passed'],
      late: [0.32, 'challenge-failed'],
      never: [0.32, 'challenge-failed'],
      refuses: [0.32, 'challenge-failed'],
      tampers: [0.32, 'challenge-failed'],
      crashed: [0.32, 'challenge-failed'],
    });
    // The simulated edge is never asked.
    expect(commands.items.filter((c) => c.edge === 'simulated')).toEqual([]);
  }, 60_000);

  it('challenges the next pending GPU on the next tick, and never the simulated one', async () => {
    const tick = await svc.challenges.tick();
    expect(tick.challenged.map((c) => [nameOf(c.providerId), c.reason, c.gpuUuid])).toEqual([
      ['honest', 'registration', 'GPU-honest-1'],
    ]);
    await settle(honest.id, 2);
    expect(verification(honest.id)[2]!.gpus).toEqual([
      { uuid: 'GPU-honest-0', status: 'verified' },
      { uuid: 'GPU-honest-1', status: 'verified' },
    ]);
    expect(commands.items.filter((c) => c.edge === 'simulated')).toEqual([]);
  }, 30_000);

  it('answers the trust query from its projection: statuses, reliability and challenges newest first', async () => {
    const { trust: t } = await trust(honest.id);
    const [first, second] = challenged(honest.id);
    expect(t).toMatchObject({
      providerId: honest.id,
      simulated: false,
      reliability: { providerId: honest.id, score: 0.8875 },
      gpus: [
        { uuid: 'GPU-honest-0', status: 'verified', challengeId: first!.challengeId, since: first!.at },
        { uuid: 'GPU-honest-1', status: 'verified', challengeId: second!.challengeId, since: second!.at },
      ],
    });
    expect(t!.challenges.map((c) => c.challengeId)).toEqual([second!.challengeId, first!.challengeId]);
    expect(t!.challenges[0]!.evidence).toEqual(second!.evidence);
    const { trust: sim } = await trust(simulated.id);
    expect(sim).toMatchObject({
      simulated: true,
      gpus: [{ uuid: 'GPU-simulated-0', status: 'simulated', challengeId: null }],
      challenges: [],
    });
    expect((await trust(createUser().getPublicKey())).trust).toBeNull();
  });

  it('spot-checks a placed job’s GPUs at its subnet’s rate while it runs, and stops when it ends', async () => {
    const js = jetstream(svc.nats.nc);
    const at = clock.now().toISOString();
    await publishEvent(js, svc.nats.prefix, JobFunded, fundedJob('job-spot', 60), 'job-job-spot');
    await publishEvent(
      js,
      svc.nats.prefix,
      JobPlaced,
      placedJob('job-spot', honest.id, 'GPU-honest-1', at),
      'job-job-spot',
    );
    const running = async () =>
      (
        await svc.pg.pool.query(
          `SELECT 1 FROM "${svc.pg.schema}".challenge_jobs WHERE job_id = 'job-spot' AND NOT ended
             AND placement IS NOT NULL AND spot_checks_per_gpu_hour = 60`,
        )
      ).rowCount === 1;
    await waitFor(running, { description: 'the job funded and placed' });
    // 60 checks per GPU-hour: over an hour's tick a check is all but certain (1 − e⁻⁶⁰).
    for (let round = 0; round < 2; round++) {
      clock.advance(HOUR);
      const tick = await svc.challenges.tick();
      expect(tick.challenged.filter((c) => c.providerId === honest.id)).toEqual([
        expect.objectContaining({ reason: 'spot-check', jobId: 'job-spot', gpuUuid: 'GPU-honest-1' }),
      ]);
      await settle(honest.id, 3 + round);
    }
    expect(challenged(honest.id).slice(2)).toEqual([
      expect.objectContaining({ reason: 'spot-check', jobId: 'job-spot', outcome: 'passed' }),
      expect.objectContaining({ reason: 'spot-check', jobId: 'job-spot', outcome: 'passed' }),
    ]);

    await publishEvent(
      js,
      svc.nats.prefix,
      JobCancelled,
      { jobId: 'job-spot', usage: [], cancelledAt: clock.now().toISOString() },
      'job-job-spot',
    );
    await waitFor(async () => !(await running()), { description: 'the job ended' });
    for (let round = 0; round < 3; round++) {
      clock.advance(HOUR);
      const tick = await svc.challenges.tick();
      expect(tick.challenged.filter((c) => c.reason === 'spot-check')).toEqual([]);
    }
  }, 60_000);

  it('challenges idle providers at random, about once per interval per GPU, never a busy one', async () => {
    await publishDiscoveryEvent(
      jetstream(svc.nats.nc),
      svc.nats.prefix,
      ProviderReservationsChanged,
      reservationsChanged(refuses.id, 1, clock.now().toISOString(), 2),
    );
    await waitFor(
      async () =>
        (
          await svc.pg.pool.query(`SELECT busy FROM "${svc.pg.schema}".providers WHERE provider_id = $1`, [
            refuses.id,
          ])
        ).rows[0].busy === true,
      { description: 'refuses busy' },
    );
    const idle: string[] = [];
    // A day per tick against a 6 h mean: each GPU's draw fires with 1 − e⁻⁴ ≈ 98%.
    for (let round = 0; round < 3; round++) {
      clock.advance(24 * HOUR);
      const tick = await svc.challenges.tick();
      for (const c of tick.challenged) {
        expect(c).toMatchObject({ reason: 'idle', jobId: null });
        idle.push(nameOf(c.providerId));
      }
    }
    expect(new Set(idle)).toEqual(new Set(['honest', 'late', 'never', 'tampers', 'crashed']));
    expect(idle.length).toBeGreaterThanOrEqual(12);
    await events.waitFor(() => challenged(honest.id).some((c) => c.reason === 'idle'), {
      description: 'an idle challenge of honest published',
    });
  }, 60_000);

  it('times an answer on the verifier’s monotonic clock: 6 s on it is late, however fast the reply', async () => {
    await register(skews);
    await events.waitFor(() => verification(skews.id).length === 1, { description: 'skews registered' });
    // No business time passes: only the pending GPU is due.
    const tick = await svc.challenges.tick();
    expect(tick.challenged.map((c) => [nameOf(c.providerId), c.reason])).toEqual([['skews', 'registration']]);
    await settle(skews.id, 1);
    const [c] = challenged(skews.id);
    expect(c!.evidence).toMatchObject({ deadlineMs: 5_000, failure: { kind: 'late' } });
    expect(c!.evidence.elapsedMs).toBeGreaterThanOrEqual(6_000);
  }, 30_000);

  it('dead-letters malformed job events with a reason naming the field, and keeps consuming', async () => {
    const js = jetstream(svc.nats.nc);
    const valid = placedJob('job-fuzz', honest.id, 'GPU-honest-1', clock.now().toISOString());
    // Seeded mutations of a valid placement, each off contract in one field.
    const mutations: [string, (d: Record<string, unknown>) => void][] = [
      ['jobId', (d) => (d['jobId'] = -1)],
      ['allocations', (d) => (d['allocations'] = [])],
      [
        'gpuUuids',
        (d) => ((d['allocations'] as { nodes: { gpuUuids: unknown }[] }[])[0]!.nodes[0]!.gpuUuids = 'GPU-x'),
      ],
      ['attempt', (d) => (d['attempt'] = 0)],
      ['unexpected', (d) => (d['unexpected'] = true)],
    ];
    for (const [, mutate] of mutations) {
      const envelope = buildEnvelope(JobPlaced, valid, { streamId: 'job-job-fuzz' });
      const data = structuredClone(envelope.data) as Record<string, unknown>;
      mutate(data);
      await js.publish(JobPlaced.subject(undefined, svc.nats.prefix), JSON.stringify({ ...envelope, data }), {
        msgID: envelope.eventId,
      });
    }
    await js.publish(JobFunded.subject(undefined, svc.nats.prefix), 'not json at all');
    const letters = (consumer: string, count: number) =>
      deadLetters.waitFor(
        () =>
          deadLetters.items.filter((d) => (d.data as { consumer: string }).consumer === consumer).length >=
          count,
        { timeoutMs: 15_000, description: `${count} dead letters of ${consumer}` },
      );
    await letters('benchmarking-job-placements', mutations.length);
    await letters('benchmarking-job-funding', 1);
    const of = (consumer: string) =>
      deadLetters.items
        .map((d) => d.data as { consumer: string; errorCode: string; errorMessage: string })
        .filter((d) => d.consumer === consumer);
    const placed = of('benchmarking-job-placements');
    expect(placed.map((d) => d.errorCode)).toEqual(mutations.map(() => 'INVALID_MESSAGE'));
    for (const [i, [field]] of mutations.entries()) expect(placed[i]!.errorMessage).toContain(field);
    expect(of('benchmarking-job-funding').map((d) => d.errorCode)).toEqual(['UNDECODABLE_MESSAGE']);
    // Nothing of them was applied; a valid funding after them is.
    await publishEvent(js, svc.nats.prefix, JobFunded, fundedJob('job-after', 2), 'job-job-after');
    await waitFor(
      async () =>
        (
          await svc.pg.pool.query(
            `SELECT 1 FROM "${svc.pg.schema}".challenge_jobs WHERE job_id = 'job-after'`,
          )
        ).rowCount === 1,
      { description: 'the valid funding applied' },
    );
    expect(
      (await svc.pg.pool.query(`SELECT 1 FROM "${svc.pg.schema}".challenge_jobs WHERE job_id = 'job-fuzz'`))
        .rowCount,
    ).toBe(0);
  }, 30_000);

  it('decides a challenge a restart left out no-answer on the first tick after its time', async () => {
    const eventing = svc.service.app.get<EventingRuntime>(EVENTING);
    const benchmarks = svc.service.app.get(ProviderBenchmarks);
    // The challenge is issued, then the service dies before its command goes out.
    const issuedAt = clock.now();
    const stored = await eventing.db.transaction((tx) =>
      benchmarks.issueChallenge(
        crashed.id,
        {
          challengeId: 'crash-1',
          gpuUuid: 'GPU-crashed-0',
          reason: 'idle',
          jobId: null,
          seed: 'd'.repeat(64),
          n: N,
          dtype: 'fp16',
          claimedTflops: 742.1,
          deadlineMs: 5_000,
          expiresAt: new Date(issuedAt.getTime() + 8_000).toISOString(),
        },
        tx,
      ),
    );
    expect(stored).toBeDefined();
    svc = await svc.restart();
    // Before its time nothing is decided, and no second challenge goes to the provider.
    const early = await svc.challenges.tick();
    expect(early.expired).toEqual([]);
    expect(early.challenged.filter((c) => c.providerId === crashed.id)).toEqual([]);
    clock.advance(8_000);
    const tick = await svc.challenges.tick();
    expect(tick.expired).toEqual([crashed.id]);
    await events.waitFor(() => challenged(crashed.id).some((c) => c.challengeId === 'crash-1'), {
      description: 'the lost challenge decided',
    });
    expect(challenged(crashed.id).find((c) => c.challengeId === 'crash-1')!.evidence.failure).toMatchObject({
      kind: 'no-answer',
      detail: expect.stringContaining('no commitment by') as string,
    });
    const { trust: t } = await trust(crashed.id);
    expect(t!.challenges[0]).toMatchObject({ challengeId: 'crash-1', outcome: 'failed' });
  }, 60_000);

  it('sends every GPU back to pending when the hardware changes, and challenges them again', async () => {
    const { host, inventory } = registered(honest.id, {
      name: honest.name,
      address: '127.0.0.1',
      gpus: ['GPU-honest-0', 'GPU-honest-2'].map((uuid, i) => ({
        ...simulatedGpu(i, H100, 16 * 1024 ** 3),
        uuid,
      })),
      simulated: false,
      at: clock.now().toISOString(),
    });
    const before = verification(honest.id).length;
    await publishDiscoveryEvent(jetstream(svc.nats.nc), svc.nats.prefix, ProviderInventoryChanged, {
      providerId: honest.id,
      sequence: 2,
      at: clock.now().toISOString(),
      host,
      inventory,
    });
    await events.waitFor(() => verification(honest.id).length > before, {
      description: 'honest back to pending',
    });
    expect(verification(honest.id)[before]).toMatchObject({
      cause: 'inventory-changed',
      challengeId: null,
      gpus: [
        { uuid: 'GPU-honest-0', status: 'pending' },
        { uuid: 'GPU-honest-2', status: 'pending' },
      ],
    });
    const tick = await svc.challenges.tick();
    expect(tick.challenged.filter((c) => c.providerId === honest.id)).toEqual([
      expect.objectContaining({ reason: 'registration', gpuUuid: 'GPU-honest-0' }),
    ]);
    await events.waitFor(() => verification(honest.id).length > before + 1, {
      description: 'honest re-verified',
    });
    expect(verification(honest.id)[before + 1]!.gpus).toEqual([
      { uuid: 'GPU-honest-0', status: 'verified' },
      { uuid: 'GPU-honest-2', status: 'pending' },
    ]);
  }, 30_000);

  it('reported no errors', () => {
    expect(svc.errors).toEqual([]);
  });
});

const placedJob = (
  jobId: string,
  providerId: string,
  gpuUuid: string,
  at: string,
): InputOf<typeof JobPlaced> => ({
  jobId,
  tenantId: 'tenant-a',
  asset: 'USDC',
  allocations: [
    {
      name: 'main',
      gpuCount: 1,
      nodes: [{ providerId, hostId: 'host', gpuUuids: [gpuUuid], reservationId: 'r-1', ranks: 1 }],
      predictedStepUs: 1000,
      pricePerHourMinor: '100',
    },
  ],
  holdUntil: at,
  attempt: 1,
  at,
});

const fundedJob = (jobId: string, spotChecksPerGpuHour: number): InputOf<typeof JobFunded> => ({
  jobId,
  tenantId: 'tenant-a',
  subnetId: 'public',
  subnetVersion: 1,
  asset: 'USDC',
  gpus: 1,
  gpuClasses: ['H100-80GB'],
  maxDurationSeconds: 3600,
  escrow: '40000000',
  maxCharge: '36000000',
  subnetFee: '2000000',
  platformFee: '2000000',
  terms: {
    pricing: { mode: 'fixed', pricePerGpuHour: { 'H100-80GB': '3000000' } },
    maxPricePerGpuHour: '9000000',
    billingIncrementSeconds: 60,
    minimumChargeSeconds: 60,
    subnetFeeBps: 500,
    platformFeeBps: 500,
    lowEscrowBps: 1000,
    slashing: {},
    trust: { ...DEFAULT_SUBNET_TRUST, spotChecksPerGpuHour },
  },
  fundedAt: '2030-01-01T00:00:00.000Z',
});
