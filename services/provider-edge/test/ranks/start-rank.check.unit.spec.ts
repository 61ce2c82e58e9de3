import {
  type EdgeReservation,
  MAX_RANK_ENV_BYTES,
  MAX_RANK_ENV_ENTRIES,
  StartRankOnEdge,
} from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { activeReservations } from '../../src/domain/policy/reservation.check';
import { RESTART_WINDOW_MS, reservationsInUseUntil, STOP_ALLOWANCE_MS } from '../../src/domain/ranks/in-use';
import {
  checkStartRank,
  envBytes,
  type StartRankContext,
  type StartRankRequest,
  utf8Length,
} from '../../src/domain/ranks/start-rank.check';

const GPU_A = 'GPU-aaaaaaaa-0000-0000-0000-000000000000';
const GPU_B = 'GPU-bbbbbbbb-0000-0000-0000-000000000000';
const GPU_C = 'GPU-cccccccc-0000-0000-0000-000000000000';

const reservation: EdgeReservation = {
  reservationId: 'res-1',
  jobId: 'job-1',
  gpuUuids: [GPU_A, GPU_B],
  cpuMillicores: 8_000,
  memoryBytes: 64 * 1024 ** 3,
  expiresAt: '2030-01-01T21:10:00.000Z',
};

const ctx: StartRankContext = {
  policy: { images: ['nvcr.io/nvidia/'], maxJobDurationMs: 12 * 3_600_000 },
  gpus: [
    { uuid: GPU_A, vendor: 'nvidia' },
    { uuid: GPU_B, vendor: 'nvidia' },
    { uuid: GPU_C, vendor: 'amd' },
  ],
  reservations: [reservation],
  ranks: [],
  runtimes: new Set(['process']),
  overlays: false,
};

const request = (over: Partial<StartRankRequest> = {}): StartRankRequest =>
  StartRankOnEdge.schema.parse({
    jobId: 'job-1',
    attempt: 1,
    reservationId: 'res-1',
    allocation: 'a-1',
    rank: 1,
    localRank: 1,
    worldSize: 4,
    runtime: 'process',
    image: null,
    cmd: ['/bin/sh', '-c', 'echo hi'],
    entrypoint: null,
    env: { RANK: '1' },
    workingDir: null,
    gpuUuids: [GPU_A],
    limits: { cpuMillicores: 1_000, memoryBytes: 1024 ** 3, pids: null },
    maxDurationMs: 3_600_000,
    overlay: null,
    ...over,
  });

const codes = (r: ReturnType<typeof checkStartRank>) =>
  r.outcome === 'rejected' ? r.reasons.map((x) => `${x.code}@${x.field ?? ''}`) : [];

describe('checkStartRank: what the edge refuses to start', () => {
  it('accepts a consistent start inside its reservation', () => {
    expect(checkStartRank(ctx, request())).toEqual({ outcome: 'ok', reservation, gpuVendor: 'nvidia' });
    expect(checkStartRank(ctx, request({ gpuUuids: [] }))).toMatchObject({ outcome: 'ok', gpuVendor: null });
  });

  const hugeEnv = Object.fromEntries(
    Array.from({ length: MAX_RANK_ENV_ENTRIES + 1 }, (_, i) => [`V${i}`, 'x']),
  );
  const fatEnv = Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [`BIG${i}`, 'x'.repeat(MAX_RANK_ENV_BYTES / 4)]),
  );
  const table: [string, StartRankContext, StartRankRequest, string[]][] = [
    ['unknown reservation', ctx, request({ reservationId: 'res-9' }), ['RESERVATION_UNKNOWN@reservationId']],
    ['a reservation of another job', ctx, request({ jobId: 'job-2' }), ['RESERVATION_UNKNOWN@jobId']],
    [
      'an expired reservation (not in the active list)',
      { ...ctx, reservations: [] },
      request(),
      ['RESERVATION_UNKNOWN@reservationId'],
    ],
    [
      'a GPU outside the reservation',
      ctx,
      request({ gpuUuids: [GPU_A, GPU_C] }),
      ['GPU_NOT_RESERVED@gpuUuids[1]', 'INVALID_REQUEST@gpuUuids'],
    ],
    ['a GPU listed twice', ctx, request({ gpuUuids: [GPU_A, GPU_A] }), ['INVALID_REQUEST@gpuUuids[1]']],
    ['a rank outside the world', ctx, request({ rank: 4, localRank: 0 }), ['RANK_UNKNOWN@rank']],
    ['a local rank above the rank', ctx, request({ rank: 1, localRank: 2 }), ['RANK_UNKNOWN@localRank']],
    ['too many variables', ctx, request({ env: hugeEnv }), ['ENV_TOO_LARGE@env']],
    ['too many bytes of environment', ctx, request({ env: fatEnv }), ['ENV_TOO_LARGE@env']],
    [
      'a runtime the edge does not run',
      ctx,
      request({ runtime: 'docker', image: 'nvcr.io/nvidia/pytorch:24.01' }),
      ['RUNTIME_UNAVAILABLE@runtime'],
    ],
    [
      'an image not allowed',
      { ...ctx, runtimes: new Set(['docker']) },
      request({ runtime: 'docker', image: 'evil.io/miner' }),
      ['IMAGE_NOT_ALLOWED@image'],
    ],
    [
      'docker without an image',
      { ...ctx, runtimes: new Set(['docker']) },
      request({ runtime: 'docker' }),
      ['INVALID_REQUEST@image'],
    ],
    [
      'an image for the process runtime',
      ctx,
      request({ image: 'nvcr.io/nvidia/x' }),
      ['INVALID_REQUEST@image'],
    ],
    ['no command', ctx, request({ cmd: [] }), ['INVALID_REQUEST@cmd']],
    ['an empty command', ctx, request({ cmd: [''] }), ['INVALID_REQUEST@cmd[0]']],
    ['NUL in an argument', ctx, request({ cmd: ['/bin/sh', 'a\0b'] }), ['INVALID_REQUEST@cmd']],
    ['NUL in a value', ctx, request({ env: { A: 'x\0y' } }), ['INVALID_REQUEST@env.A']],
    [
      'more memory than reserved',
      ctx,
      request({ limits: { cpuMillicores: 1, memoryBytes: 65 * 1024 ** 3, pids: null } }),
      ['INVALID_REQUEST@limits.memoryBytes'],
    ],
    [
      'more CPU than reserved',
      ctx,
      request({ limits: { cpuMillicores: 9_000, memoryBytes: 1, pids: null } }),
      ['INVALID_REQUEST@limits.cpuMillicores'],
    ],
    [
      'a duration above the policy',
      ctx,
      request({ maxDurationMs: 13 * 3_600_000 }),
      ['DURATION_TOO_LONG@maxDurationMs'],
    ],
    [
      'an overlay on an edge without overlays',
      ctx,
      request({ overlay: { interface: 'gn0', address: '10.0.0.2' } }),
      ['RUNTIME_UNAVAILABLE@overlay'],
    ],
    [
      'a superseded attempt',
      {
        ...ctx,
        ranks: [{ jobId: 'job-1', attempt: 2, rank: 0, localRank: 0, worldSize: 4, state: 'running' }],
      },
      request(),
      ['RANK_UNKNOWN@attempt'],
    ],
    [
      'another world size in the same attempt',
      {
        ...ctx,
        ranks: [{ jobId: 'job-1', attempt: 1, rank: 0, localRank: 0, worldSize: 8, state: 'running' }],
      },
      request(),
      ['RANK_UNKNOWN@worldSize'],
    ],
    [
      'a local rank taken by another rank',
      {
        ...ctx,
        ranks: [{ jobId: 'job-1', attempt: 1, rank: 2, localRank: 1, worldSize: 4, state: 'running' }],
      },
      request(),
      ['RANK_UNKNOWN@localRank'],
    ],
  ];
  it.each(table)('rejects %s, naming the field', (_name, context, req, expected) => {
    expect(codes(checkStartRank(context, req))).toEqual(expected);
  });

  it('reports every problem at once', () => {
    expect(
      codes(checkStartRank(ctx, request({ reservationId: 'nope', rank: 9, maxDurationMs: 1e9 }))),
    ).toEqual(['RESERVATION_UNKNOWN@reservationId', 'RANK_UNKNOWN@rank', 'DURATION_TOO_LONG@maxDurationMs']);
  });

  it('the contract refuses `..` and absolute working directories before the edge sees them', () => {
    for (const workingDir of ['../etc', 'a/../../b', '/etc', 'a\0b'])
      expect(StartRankOnEdge.schema.safeParse({ ...request(), workingDir }).success).toBe(false);
  });

  it('counts the environment in UTF-8 bytes, names and values', () => {
    expect(utf8Length('aé€😀')).toBe(1 + 2 + 3 + 4);
    expect(envBytes({ AB: 'é' })).toBe(4);
  });
});

describe('reservations in use by ranks do not lapse at their hold', () => {
  const started = '2030-01-01T21:00:00.000Z';
  const t0 = Date.parse(started);
  const after = Date.parse(reservation.expiresAt) + 1;

  it('keeps a reservation while a rank runs, until its max duration (plus the stop)', () => {
    const inUse = reservationsInUseUntil([
      {
        reservationId: 'res-1',
        state: 'running',
        startedAt: started,
        exitedAt: null,
        maxDurationMs: 3_600_000,
      },
    ]);
    expect(inUse.get('res-1')).toBe(t0 + 3_600_000 + STOP_ALLOWANCE_MS);
    expect(activeReservations([reservation], after, inUse)).toEqual([reservation]);
    expect(activeReservations([reservation], after)).toEqual([]);
    expect(activeReservations([reservation], t0 + 3_600_000 + STOP_ALLOWANCE_MS, inUse)).toEqual([]);
  });

  it('after the last exit, keeps it for a restart window only', () => {
    const exited = new Date(after + 60_000).toISOString();
    const inUse = reservationsInUseUntil([
      {
        reservationId: 'res-1',
        state: 'exited',
        startedAt: started,
        exitedAt: exited,
        maxDurationMs: 3_600_000,
      },
    ]);
    expect(inUse.get('res-1')).toBe(Date.parse(exited) + RESTART_WINDOW_MS);
    expect(activeReservations([reservation], Date.parse(exited) + RESTART_WINDOW_MS + 1, inUse)).toEqual([]);
  });
});
