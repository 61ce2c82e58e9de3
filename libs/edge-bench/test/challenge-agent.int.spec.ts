import {
  buildEnvelope,
  ChallengeCommitReplySchema,
  ChallengeOpenReplySchema,
  type ChallengeDtype,
  OpenChallengeOnEdge,
  RunChallengeOnEdge,
} from '@gpunet/contracts';
import { EventCollector, type NatsTestContext, seededRandom, useNats } from '@gpunet/testing';
import { createUser } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChallengeAgentEvent,
  type ChallengeWorker,
  commitChallenge,
  DEFAULT_CHALLENGE_POLICY,
  EdgeChallengeAgent,
  newOpening,
  PythonChallengeWorker,
  verifyOpening,
} from '../src';

const GPU = 'GPU-7f1c9a52-0d33-4b8e-9a51-4e2b6c0d1f20';
const hex = (rng: ReturnType<typeof seededRandom>, bytes = 32) =>
  Array.from({ length: bytes }, () => rng.int(0, 255).toString(16).padStart(2, '0')).join('');
const bytesOf = (rng: ReturnType<typeof seededRandom>) => (size: number) =>
  Uint8Array.from({ length: size }, () => rng.int(0, 255));

describe('EdgeChallengeAgent with the real Python worker on this CPU, over NATS', () => {
  let nats: NatsTestContext;
  let agent: EdgeChallengeAgent;
  let simulatedAgent: EdgeChallengeAgent;
  const edgeId = createUser().getPublicKey();
  const simulatedEdge = createUser().getPublicKey();
  const events = new EventCollector<ChallengeAgentEvent>('challenge agent events');

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_challenge' });
    agent = new EdgeChallengeAgent({
      edgeId,
      nc: nats.nc,
      prefix: nats.prefix,
      gpus: () => [{ uuid: GPU, index: 0 }],
      simulated: () => false,
      // One thread: the tests share two cores with everyone else.
      worker: new PythonChallengeWorker({ threads: 1 }),
      warm: true,
      onEvent: (e) => events.push(e),
    });
    agent.start();
    const never: ChallengeWorker = {
      commit: () => Promise.reject(new Error('a simulated edge never computes')),
      open: () => Promise.reject(new Error('a simulated edge never computes')),
      warm: () => Promise.reject(new Error('a simulated edge never computes')),
      close: () => Promise.resolve(),
    };
    simulatedAgent = new EdgeChallengeAgent({
      edgeId: simulatedEdge,
      nc: nats.nc,
      prefix: nats.prefix,
      gpus: () => [{ uuid: 'SIM-nvidia-0', index: 0 }],
      simulated: () => true,
      worker: never,
      warm: true,
    });
    simulatedAgent.start();
    await nats.nc.flush();
    await agent.idle(); // warmed: torch imported, kernels run once
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await simulatedAgent?.stop();
    await nats?.cleanup();
  });

  const commit = async (
    data: {
      challengeId: string;
      seed: string;
      n: number;
      dtype?: ChallengeDtype;
      deadlineMs?: number;
      gpuUuid?: string;
    },
    options: { edge?: string; timeoutMs?: number; offContract?: Record<string, unknown> } = {},
  ) => {
    const envelope = buildEnvelope(
      RunChallengeOnEdge,
      { gpuUuid: GPU, dtype: 'fp32', deadlineMs: 30_000, ...data },
      { streamId: `challenge-${data.challengeId}` },
    );
    // Fields a verifier off the contract might send, past buildEnvelope's own validation.
    const sent = options.offContract
      ? { ...envelope, data: { ...envelope.data, ...options.offContract } }
      : envelope;
    const reply = await nats.nc.request(
      RunChallengeOnEdge.subject({ edgeId: options.edge ?? edgeId }, nats.prefix),
      JSON.stringify(sent),
      { timeout: options.timeoutMs ?? 30_000 },
    );
    return ChallengeCommitReplySchema.parse(reply.json());
  };

  const open = async (
    data: { challengeId: string; rows: number[]; freivaldsSeed: string },
    edge = edgeId,
  ) => {
    const envelope = buildEnvelope(OpenChallengeOnEdge, data, { streamId: `challenge-${data.challengeId}` });
    const reply = await nats.nc.request(
      OpenChallengeOnEdge.subject({ edgeId: edge }, nats.prefix),
      JSON.stringify(envelope),
      {
        timeout: 30_000,
      },
    );
    return ChallengeOpenReplySchema.parse(reply.json());
  };

  /** One challenge end to end as the verifier runs it; the verdict. */
  const challenge = async (
    id: string,
    seed: string,
    n: number,
    dtype: ChallengeDtype,
    rng: ReturnType<typeof seededRandom>,
  ) => {
    const sentAt = performance.now();
    const committed = await commit({ challengeId: id, seed, n, dtype });
    const elapsedMs = performance.now() - sentAt;
    if (committed.outcome !== 'committed') throw new Error(`${id}: ${committed.code} ${committed.message}`);
    const { rows, freivaldsSeed } = newOpening(n, 8, bytesOf(rng));
    const opened = await open({ challengeId: id, rows, freivaldsSeed });
    if (opened.outcome !== 'opened') throw new Error(`${id}: ${opened.code} ${opened.message}`);
    return {
      root: committed.root,
      elapsedMs,
      verdict: verifyOpening({ seed, n, root: committed.root, rows, freivaldsSeed, reply: opened }),
    };
  };

  it('commits to the seeded product (the same root as the TypeScript twin) and opens rows that verify', async () => {
    const rng = seededRandom('first');
    const seed = hex(rng);
    const { root, verdict } = await challenge('first', seed, 64, 'bf16', rng);
    expect(root).toBe(commitChallenge(seed, 64).root);
    expect(verdict).toEqual({ ok: true });
    // Opened once: the commitment is gone.
    expect(await open({ challengeId: 'first', rows: [0], freivaldsSeed: seed })).toMatchObject({
      outcome: 'declined',
      code: 'UNKNOWN_CHALLENGE',
    });
  });

  it('passes 100 seeded honest challenges (n 64–128, every dtype) with no false verdict', async () => {
    const rng = seededRandom('honest-100');
    const dtypes: ChallengeDtype[] = ['fp16', 'bf16', 'fp32'];
    const verdicts = [];
    const late: number[] = [];
    for (let i = 0; i < 100; i++) {
      const n = rng.pick([64, 80, 96, 112, 128]);
      const { verdict, elapsedMs } = await challenge(`honest-${i}`, hex(rng), n, dtypes[i % 3]!, rng);
      verdicts.push(verdict);
      // The work at these sizes is negligible: any deadline the verifier sets is at least the
      // policy's allowance, so an honest commitment later than that would be a false `late`.
      if (elapsedMs > DEFAULT_CHALLENGE_POLICY.allowanceMs) late.push(elapsedMs);
    }
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(late).toEqual([]);
    expect(verdicts).toHaveLength(100);
  }, 120_000);

  it('sends no commitment when the deadline is too short for this CPU; the worker stops near the deadline', async () => {
    const seed = hex(seededRandom('late'));
    // n = 2048 at fp32 takes this CPU seconds; 200 ms is far too short.
    await expect(
      commit({ challengeId: 'late', seed, n: 2048, deadlineMs: 200 }, { timeoutMs: 5_000 }),
    ).rejects.toThrow(/timeout|TIMEOUT/i);
    const gaveUp = await events.waitFor((e) => e.type === 'gave-up' && e.challengeId === 'late');
    const reason = (gaveUp as { reason: string }).reason;
    expect(reason).toMatch(/^DEADLINE: deadline of 200 ms passed after \d+ ms/);
    // Stopped within a block of the deadline, not after the whole product.
    expect(Number(/after (\d+) ms/.exec(reason)![1])).toBeLessThan(3_000);
    await agent.idle();
    // And the same worker answers the next challenge.
    const rng = seededRandom('after-late');
    expect((await challenge('after-late', hex(rng), 64, 'fp32', rng)).verdict).toEqual({ ok: true });
  }, 30_000);

  it('declines BUSY while a challenge runs', async () => {
    const rng = seededRandom('busy');
    const slow = commit({ challengeId: 'slow', seed: hex(rng), n: 1024, dtype: 'fp32', deadlineMs: 20_000 });
    // Same connection, same subscription: the slow request reaches the agent first.
    const second = await commit({ challengeId: 'second', seed: hex(rng), n: 64 });
    expect(second).toMatchObject({ outcome: 'declined', challengeId: 'second', code: 'BUSY' });
    expect(await slow).toMatchObject({ outcome: 'committed', challengeId: 'slow' });
  }, 30_000);

  it.each([
    ['an unknown GPU', { gpuUuid: 'GPU-00000000-0000-0000-0000-000000000000' }, 'UNKNOWN_GPU', /gpuUuid/],
    ['n not a multiple of 16', { n: 24 }, 'INVALID_REQUEST', /n: must be a multiple of 16/],
    ['a seed that is not 32 bytes of hex', { seed: 'xyz' }, 'INVALID_REQUEST', /seed/],
  ])('declines %s', async (_name, change, code, message) => {
    const reply = await commit({ challengeId: 'bad', seed: 'ab'.repeat(32), n: 64 }, { offContract: change });
    expect(reply).toMatchObject({
      outcome: 'declined',
      challengeId: 'bad',
      code,
      message: expect.stringMatching(message),
    });
  });

  it('declines openings of unknown challenges and of rows the product does not have', async () => {
    const seed = 'cd'.repeat(32);
    expect(await open({ challengeId: 'never-committed', rows: [1], freivaldsSeed: seed })).toMatchObject({
      outcome: 'declined',
      code: 'UNKNOWN_CHALLENGE',
    });
    expect(await commit({ challengeId: 'small', seed, n: 16 })).toMatchObject({ outcome: 'committed' });
    expect(await open({ challengeId: 'small', rows: [16], freivaldsSeed: seed })).toMatchObject({
      outcome: 'declined',
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('rows'),
    });
    expect(await open({ challengeId: 'small', rows: [3, 3], freivaldsSeed: seed })).toMatchObject({
      outcome: 'declined',
      code: 'INVALID_REQUEST',
      message: 'rows: must be distinct',
    });
  });

  it('declines every challenge on a simulated edge (SIMULATED) and never computes', async () => {
    expect(
      await commit(
        { challengeId: 'sim', seed: 'ef'.repeat(32), n: 64, gpuUuid: 'SIM-nvidia-0' },
        { edge: simulatedEdge },
      ),
    ).toMatchObject({
      outcome: 'declined',
      code: 'SIMULATED',
    });
    expect(
      await open({ challengeId: 'sim', rows: [0], freivaldsSeed: 'ef'.repeat(32) }, simulatedEdge),
    ).toMatchObject({
      outcome: 'declined',
      code: 'SIMULATED',
    });
  });
});
