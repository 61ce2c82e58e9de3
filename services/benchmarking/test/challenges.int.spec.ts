import {
  buildEnvelope,
  type ChallengeCommitReply,
  DEFAULT_SUBNET_TRUST,
  type Envelope,
  FindGpuVerification,
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
import {
  type ChallengeCommitment,
  challengeProduct,
  commitChallenge,
  commitProduct,
  EdgeChallengeAgent,
  openCommitment,
  PythonChallengeWorker,
} from '@gpunet/edge-bench';
import { EVENTING, type EventingRuntime, askQuery } from '@gpunet/eventing';
import { EventCollector, FakeClock, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser } from '@nats-io/nkeys';
import type { Msg } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * GPU challenges end to end on real NATS and Postgres, with the real challenge library on both
 * sides: benchmarking as production boots it (its arithmetic `@gpunet/edge-bench`'s), the honest
 * edge the real `EdgeChallengeAgent` with its Python worker computing on this CPU, a simulated one
 * the real agent with a simulated inventory, one that lost its GPU the real agent whose inventory
 * no longer has it. The misbehaving edges are the library's TypeScript twin of an honest edge
 * (`commitChallenge` / `openCommitment`) changed in one place each: it answers after its deadline,
 * never answers, alters an opened row, commits to a product with one wrong element, or (with the
 * verifier's monotonic clock moved) answers 6 s late on the verifier's clock. The message flow, the
 * replies, the timing, the decider, Postgres and JetStream are all real.
 *
 * Sizes are the real `sizeChallenge`'s under the verifier's policy overrides (its config, as
 * BENCHMARKING_CHALLENGE_MAX_N / _ALLOWANCE set them): n = 64 for every GPU (maxN 64 lowers the
 * library's minN of 256 with it), and a deadline of ⌈2 000 ms allowance + 4 × 2n³ at the claimed
 * figure + n²·4 bytes hashed at 200 MB/s⌉ = 2 001 ms for an H100 (742.1 TFLOPS) and a T4 (48.8).
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const H100 = 'NVIDIA H100 80GB HBM3';
const T4 = 'Tesla T4';
/** The verifier's policy overrides (`challengePolicy`): small products, a deadline a loaded machine keeps. */
const POLICY = { maxN: 64, allowanceMs: 2_000 };
/** The challenges' size and deadline under `POLICY` (the real `sizeChallenge`'s). */
const N = 64;
const DEADLINE_MS = 2_001;
/** Rows the verifier opens (the library's default). */
const OPEN_ROWS = 8;
/** The late edge answers this long after its deadline (within the verifier's grace of 3 s). */
const LATE_BY_MS = 500;

/**
 * How a twin of an honest edge differs from one: in one place each. `late`: answers `LATE_BY_MS`
 * after the deadline; `never`: no commitment at all; `tampers`: alters an opened row after
 * committing; `wrong`: commits to the product with one element off by one; `skews`: the verifier's
 * monotonic clock moves 6 s while it computes.
 */
type Twin = 'late' | 'never' | 'tampers' | 'wrong' | 'skews';
/** `agent`: the real edge agent and worker; `lost-gpu`: the real agent, its inventory without the GPU. */
type Behaviour = 'agent' | 'lost-gpu' | Twin;

interface Edge {
  readonly name: string;
  readonly id: string;
  readonly gpus: readonly string[];
  readonly model: string;
  readonly behaviour: Behaviour | null;
  readonly simulated: boolean;
}

describe('GPU challenges (NATS + Postgres, the real library, the real edge agent and worker)', () => {
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
  const agents: EdgeChallengeAgent[] = [];
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
  const honest = edge('honest', 'agent', 2);
  const late = edge('late', 'late', 1, T4);
  const never = edge('never', 'never', 1, T4);
  const refuses = edge('refuses', 'lost-gpu', 1);
  const tampers = edge('tampers', 'tampers', 1);
  const wrong = edge('wrong', 'wrong', 1);
  const simulated = edge('simulated', 'agent', 1, H100, true);
  const crashed = edge('crashed', null, 1);
  // Registered in its own case, so that its challenge runs alone.
  const skews = edge('skews', 'skews', 1);
  const edges = [honest, late, never, refuses, tampers, wrong, simulated, crashed, skews];
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
  /** Each challenge's seed as the verifier sent it. */
  const seeds = new Map<string, string>();

  /** The twins' commitments, by challenge. */
  const commitments = new Map<string, ChallengeCommitment>();
  /** An honest edge in TypeScript, changed in the one place its behaviour names. */
  const twin = (e: Edge & { behaviour: Twin }, m: Msg): void => {
    const env = m.json<Envelope>();
    if (m.subject.endsWith('.challenge.v1')) {
      const c = env.data as InputOf<typeof RunChallengeOnEdge>;
      if (e.behaviour === 'never') return;
      let commitment: ChallengeCommitment;
      if (e.behaviour === 'wrong') {
        const product = challengeProduct(c.seed, c.n);
        // One element off by one, in a row the seed picks (the opening's rows are chosen later).
        const at = Number.parseInt(c.seed.slice(0, 8), 16) % product.length;
        product[at]! += 1;
        commitment = commitProduct(product, c.n);
      } else commitment = commitChallenge(c.seed, c.n);
      commitments.set(c.challengeId, commitment);
      const commit: ChallengeCommitReply = {
        outcome: 'committed',
        challengeId: c.challengeId,
        root: commitment.root,
        edgeComputeMs: 1,
      };
      // The verifier's clock moves 6 s while the edge computes (the deadline is about 2 s).
      if (e.behaviour === 'skews') skewMs += 6_000;
      // A slow device: its honest answer comes after its deadline.
      if (e.behaviour === 'late')
        setTimeout(() => m.respond(JSON.stringify(commit)), c.deadlineMs + LATE_BY_MS);
      else m.respond(JSON.stringify(commit));
      return;
    }
    const o = env.data as InputOf<typeof OpenChallengeOnEdge>;
    const opened = openCommitment(commitments.get(o.challengeId)!, o.challengeId, o.rows, o.freivaldsSeed);
    if (e.behaviour === 'tampers') opened.rows[0]!.values[5]! += 1;
    m.respond(JSON.stringify(opened));
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
      timeoutMs: 30_000,
      description: `${nameOf(id)}: ${count} challenge(s) published`,
    });

  beforeAll(async () => {
    svc = await startBenchmarking(
      'challenges',
      { challengeLateGraceMs: 3_000, challengeOpenTimeoutMs: 10_000, challengePolicy: POLICY },
      clock,
      { monotonicClock },
    );
    svc.nats.nc.subscribe(`${svc.nats.prefix}.benchmarking.>`, {
      callback: (_e, m) => events.push(m.json<Envelope>()),
    });
    svc.nats.nc.subscribe(`${svc.nats.prefix}.dlq.>`, {
      callback: (_e, m) => deadLetters.push(m.json<Envelope>()),
    });
    // Every command to every edge, as sent (a listener beside the edges, answering nothing).
    svc.nats.nc.subscribe(`${svc.nats.prefix}.cmd.edge.*.>`, {
      callback: (_x, m) => {
        const env = m.json<Envelope>();
        const e = edges.find((x) => m.subject.includes(`.cmd.edge.${x.id}.`));
        if (m.subject.endsWith('.challenge.v1')) {
          const c = env.data as InputOf<typeof RunChallengeOnEdge>;
          seeds.set(c.challengeId, c.seed);
        }
        commands.push({ edge: e?.name ?? m.subject, subject: m.subject, data: env.data });
      },
    });
    for (const e of edges) {
      const b = e.behaviour;
      if (b === null) continue;
      if (b === 'agent' || b === 'lost-gpu') {
        const agent = new EdgeChallengeAgent({
          edgeId: e.id,
          nc: svc.nats.nc,
          prefix: svc.nats.prefix,
          // The lost GPU: the inventory the verifier holds names it, the edge's own no longer does.
          gpus: () => (b === 'lost-gpu' ? [] : e.gpus.map((uuid, index) => ({ uuid, index }))),
          simulated: () => e.simulated,
          // One thread: the tests share two cores with everyone else.
          worker: new PythonChallengeWorker({ threads: 1 }),
          warm: b === 'agent' && !e.simulated,
        });
        agent.start();
        agents.push(agent);
        continue;
      }
      const t = { ...e, behaviour: b };
      for (const subject of ['challenge', 'challenge-open'])
        svc.nats.nc.subscribe(`${svc.nats.prefix}.cmd.edge.${e.id}.${subject}.v1`, {
          callback: (_x, m) => twin(t, m),
        });
    }
    await svc.nats.nc.flush();
    // The honest worker warmed (torch imported, its kernels run once) before any deadline runs.
    for (const a of agents) await a.idle();
    for (const e of registeredAtStart) await register(e);
  }, 120_000);

  afterAll(async () => {
    for (const a of agents) await a.stop();
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

  it('challenges each pending GPU: the honest edge passes; the late, silent, GPU-less, tampering and wrong ones fail with the evidence', async () => {
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
        ['wrong', 'registration', 'GPU-wrong-0'],
      ].sort(),
    );
    for (const e of [honest, late, never, refuses, tampers, wrong, crashed]) await settle(e.id, 1);

    // The real worker's product, committed and opened, verifies.
    const [pass] = challenged(honest.id);
    expect(pass, JSON.stringify(pass?.evidence.failure)).toMatchObject({
      outcome: 'passed',
      reason: 'registration',
      jobId: null,
      gpuUuid: 'GPU-honest-0',
    });
    expect(pass!.evidence).toMatchObject({
      n: N,
      dtype: 'fp16',
      claimedTflops: 742.1,
      deadlineMs: DEADLINE_MS,
      failure: null,
    });
    // The root of the seed's product: the Python worker's is the TypeScript twin's.
    expect(pass!.evidence.root).toBe(commitChallenge(seeds.get(pass!.challengeId)!, N).root);
    expect(pass!.evidence.openedRows).toHaveLength(OPEN_ROWS);
    expect(pass!.evidence.elapsedMs).toBeLessThan(DEADLINE_MS);
    expect(pass!.evidence.bytesSent).toBeGreaterThan(100);
    // Received: the commitment and an opening of eight 64-value rows with their proofs.
    expect(pass!.evidence.bytesReceived).toBeGreaterThan(OPEN_ROWS * N * 2);
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
      n: N,
      deadlineMs: DEADLINE_MS,
      root: commitChallenge(seeds.get(challenged(late.id)[0]!.challengeId)!, N).root,
    });
    expect(challenged(late.id)[0]!.evidence.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS + LATE_BY_MS);
    expect(failure(never.id)).toBe('no-answer');
    expect(challenged(never.id)[0]!.evidence).toMatchObject({
      elapsedMs: null,
      root: null,
      bytesReceived: 0,
    });
    expect(failure(refuses.id)).toBe('declined');
    expect(challenged(refuses.id)[0]!.evidence.failure!.detail).toContain('UNKNOWN_GPU');
    // An opened row changed after the commitment: its proof no longer reaches the root.
    expect(failure(tampers.id)).toBe('bad-proof');
    expect(challenged(tampers.id)[0]!.evidence.openedRows).toHaveLength(OPEN_ROWS);
    // One wrong element of the committed product: caught in an opened row, or else by Freivalds.
    expect(['wrong-row', 'wrong-product']).toContain(failure(wrong.id));
    // Nobody listens on the crashed edge's subject: no answer.
    expect(failure(crashed.id)).toBe('no-answer');
    for (const e of [late, never, refuses, tampers, wrong])
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
      wrong: [0.32, 'challenge-failed'],
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

  it('answers the listing’s batch query with every GPU’s status for a page of providers, in one ask', async () => {
    const stranger = createUser().getPublicKey();
    const ids = [honest.id, late.id, simulated.id, wrong.id, stranger];
    const { items } = await askQuery(
      svc.nats.nc,
      FindGpuVerification,
      { providerIds: ids },
      { timeoutMs: 5_000, prefix: svc.nats.prefix },
    );
    // Ordered by provider id; a provider benchmarking never saw is left out.
    expect(items.map((p) => p.providerId)).toEqual([honest.id, late.id, simulated.id, wrong.id].sort());
    const byId = new Map(items.map((p) => [p.providerId, p]));
    expect(byId.get(honest.id)).toEqual({
      providerId: honest.id,
      simulated: false,
      gpus: [
        { uuid: 'GPU-honest-0', status: 'verified' },
        { uuid: 'GPU-honest-1', status: 'verified' },
      ],
    });
    expect(byId.get(late.id)).toEqual({
      providerId: late.id,
      simulated: false,
      gpus: [{ uuid: 'GPU-late-0', status: 'unverified' }],
    });
    expect(byId.get(simulated.id)).toEqual({
      providerId: simulated.id,
      simulated: true,
      gpus: [{ uuid: 'GPU-simulated-0', status: 'simulated' }],
    });
    // The same statuses as the trust query's, provider by provider.
    expect(byId.get(wrong.id)!.gpus).toEqual(
      (await trust(wrong.id)).trust!.gpus.map((g) => ({ uuid: g.uuid, status: g.status })),
    );
    // The page is bounded and named: no ids, or more than 1000, is refused naming the field.
    for (const providerIds of [[], Array.from({ length: 1001 }, () => stranger)]) {
      const parsed = FindGpuVerification.request.safeParse({ providerIds });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues[0]!.path).toEqual(['providerIds']);
    }
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
    expect(new Set(idle)).toEqual(new Set(['honest', 'late', 'never', 'tampers', 'wrong', 'crashed']));
    expect(idle.length).toBeGreaterThanOrEqual(14);
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
    expect(c!.evidence).toMatchObject({ n: N, deadlineMs: DEADLINE_MS, failure: { kind: 'late' } });
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
