import {
  buildEnvelope,
  RankStartReplySchema,
  StartRankOnEdge,
  StopRanksOnEdge,
  StopRanksReplySchema,
} from '@gpunet/contracts';
import { FakeClock } from '@gpunet/testing';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RankAgent } from '../../src/app/rank-agent';
import type { RankRecord } from '../../src/infra/state.store';
import type { RankRuntime } from '../../src/app/rank-runtime.port';

const seed = Number(process.env['FUZZ_SEED'] ?? 20300101);
const EDGE = 'UABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUVW';

/** An agent whose edge holds no reservation: every start must be refused before anything runs. */
const agentWithoutReservations = () => {
  let starts = 0;
  let ranks: readonly RankRecord[] = [];
  const runtime: RankRuntime = {
    kind: 'process',
    unavailable: () => Promise.resolve(null),
    start: () => {
      starts += 1;
      return Promise.reject(new Error('must not start'));
    },
    reapOrphans: () => Promise.resolve(0),
  };
  const agent = new RankAgent({
    edgeId: EDGE,
    nc: {} as NatsConnection,
    js: {} as JetStreamClient,
    prefix: '',
    runtimes: [runtime],
    dataDir: '/nonexistent/never-written',
    clock: new FakeClock('2030-01-01T21:00:00.000Z'),
    log: () => undefined,
    random: () => 0.5,
    publishTimeoutMs: 1_000,
    sign: () => 'A'.repeat(86),
    host: {
      exclusive: (fn) => fn(),
      ranks: () => ranks,
      saveRanks: (r) => {
        ranks = r;
        return Promise.resolve();
      },
      context: () => ({
        policy: { images: ['*'], maxJobDurationMs: null },
        gpus: [],
        reservations: [],
      }),
      connected: () => true,
    },
  });
  return { agent, starts: () => starts, ranks: () => ranks };
};

const validStart = () =>
  buildEnvelope(
    StartRankOnEdge,
    {
      jobId: 'job-1',
      attempt: 1,
      reservationId: 'res-1',
      allocation: 'a',
      rank: 0,
      localRank: 0,
      worldSize: 1,
      runtime: 'process',
      image: null,
      cmd: ['/bin/true'],
      entrypoint: null,
      env: {},
      workingDir: null,
      gpuUuids: [],
      limits: { cpuMillicores: 0, memoryBytes: 0, pids: null },
      maxDurationMs: 1_000,
      overlay: null,
    },
    { streamId: 'job-1' },
  );

const START = StartRankOnEdge.subject({ edgeId: EDGE });
const STOP = StopRanksOnEdge.subject({ edgeId: EDGE });

/** A valid start with one field replaced by something hostile or odd. */
const mutatedStart = fc
  .tuple(
    fc.constantFrom(...Object.keys(validStart().data)),
    fc.oneof(
      fc.jsonValue(),
      fc.constantFrom('../../etc', '/etc', 'a\0b', '', -1, 1e300, null, [], {}, 'x'.repeat(70_000)),
      fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 50 }), { maxKeys: 20 }),
    ),
  )
  .map(([field, value]) => {
    const e = validStart();
    return { ...e, data: { ...e.data, [field]: value } };
  });

describe('the rank agent under fuzzed commands', () => {
  it('answers every payload on the start subject with a valid reply and starts nothing', async () => {
    const { agent, starts, ranks } = agentWithoutReservations();
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), mutatedStart, fc.anything()), async (raw) => {
        const reply = await agent.answer(START, raw);
        const parsed = RankStartReplySchema.parse(reply);
        expect(parsed.outcome).toBe('rejected');
      }),
      { seed, numRuns: 400 },
    );
    expect(starts()).toBe(0);
    expect(ranks()).toEqual([]);
  });

  it('names the field of a malformed start', async () => {
    const { agent } = agentWithoutReservations();
    const e = validStart();
    const reply = await agent.answer(START, { ...e, data: { ...e.data, workingDir: '../../etc' } });
    expect(reply).toMatchObject({
      outcome: 'rejected',
      jobId: 'job-1',
      rank: 0,
      reasons: [{ code: 'INVALID_REQUEST', field: 'workingDir' }],
    });
    expect(await agent.answer(START, validStart())).toMatchObject({
      outcome: 'rejected',
      reasons: [{ code: 'RESERVATION_UNKNOWN', field: 'reservationId' }],
    });
  });

  it('answers every payload on the stop subject (stopping nothing it does not run)', async () => {
    const { agent } = agentWithoutReservations();
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), mutatedStart, fc.anything()), async (raw) => {
        StopRanksReplySchema.parse(await agent.answer(STOP, raw));
      }),
      { seed, numRuns: 200 },
    );
    // A start envelope on the stop subject is refused too.
    expect(await agent.answer(STOP, validStart())).toEqual({ jobId: 'job-1', stopping: 0 });
  });
});
