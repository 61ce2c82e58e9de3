import {
  type EdgeReservation,
  type Gpu,
  MAX_RANK_ENV_BYTES,
  MAX_RANK_ENV_ENTRIES,
  type PayloadOf,
  type RankRejection,
  type StartRankOnEdge,
} from '@gpunet/contracts';
import type { Policy } from '../policy/policy';
import { imageAllowed } from '../policy/reservation.check';

export type StartRankRequest = PayloadOf<typeof StartRankOnEdge>;

/** What the edge knows about a rank it started (a `RankRecord` of the state file, as far as the check needs). */
export interface KnownRank {
  readonly jobId: string;
  readonly attempt: number;
  readonly rank: number;
  readonly localRank: number;
  readonly worldSize: number;
  readonly state: 'running' | 'exited';
}

/** Everything the edge knows when a start arrives (the reservations are the active ones). */
export interface StartRankContext {
  readonly policy: Pick<Policy, 'images' | 'maxJobDurationMs'>;
  readonly gpus: readonly Pick<Gpu, 'uuid' | 'vendor'>[];
  readonly reservations: readonly EdgeReservation[];
  readonly ranks: readonly KnownRank[];
  /** Runtimes this edge is configured to run. */
  readonly runtimes: ReadonlySet<'process' | 'docker'>;
  /** Whether the edge can put a rank in a job overlay (network namespaces). */
  readonly overlays: boolean;
}

export type StartRankDecision =
  | {
      readonly outcome: 'ok';
      readonly reservation: EdgeReservation;
      readonly gpuVendor: 'nvidia' | 'amd' | null;
    }
  | { readonly outcome: 'rejected'; readonly reasons: readonly RankRejection[] };

/** Size of an environment as the limits count it: names and values, UTF-8 bytes. */
export const envBytes = (env: Readonly<Record<string, string>>): number =>
  Object.entries(env).reduce((s, [k, v]) => s + utf8Length(k) + utf8Length(v), 0);

/** UTF-8 length of a string (a lone surrogate counts 3 bytes, as its replacement character). */
export const utf8Length = (text: string): number => {
  let n = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
};

/**
 * The edge's check of a (schema-valid) start command against its state, its policy and its
 * configuration: every reason is reported, each with the field at fault. Pure; the file-system
 * parts (the working directory after symlinks) and the runtime's own availability are checked by
 * the rank agent afterwards.
 */
export const checkStartRank = (ctx: StartRankContext, req: StartRankRequest): StartRankDecision => {
  const reasons: RankRejection[] = [];
  const reject = (code: RankRejection['code'], message: string, field: string | null) =>
    reasons.push({ code, message: message.slice(0, 1024), field });

  // The reservation: on this edge, of this job, still active.
  const reservation = ctx.reservations.find((r) => r.reservationId === req.reservationId);
  if (!reservation)
    reject(
      'RESERVATION_UNKNOWN',
      `this edge holds no active reservation ${req.reservationId} (unknown, released or expired)`,
      'reservationId',
    );
  else if (reservation.jobId !== req.jobId)
    reject(
      'RESERVATION_UNKNOWN',
      `reservation ${req.reservationId} is not held for job ${req.jobId}`,
      'jobId',
    );

  // GPUs: a subset of the reservation's, each once, of one vendor.
  const seen = new Set<string>();
  const vendors = new Set<'nvidia' | 'amd'>();
  req.gpuUuids.forEach((uuid, i) => {
    const field = `gpuUuids[${i}]`;
    if (seen.has(uuid)) reject('INVALID_REQUEST', `GPU ${uuid} is listed twice`, field);
    seen.add(uuid);
    if (reservation && reservation.jobId === req.jobId && !reservation.gpuUuids.includes(uuid))
      reject('GPU_NOT_RESERVED', `GPU ${uuid} is not in reservation ${req.reservationId}`, field);
    const gpu = ctx.gpus.find((g) => g.uuid === uuid);
    if (gpu) vendors.add(gpu.vendor);
  });
  if (vendors.size > 1)
    reject('INVALID_REQUEST', 'a rank cannot see NVIDIA and AMD GPUs at once', 'gpuUuids');

  // Ranks: inside the world, consistent with the ranks of the same attempt started here.
  if (req.rank >= req.worldSize)
    reject('RANK_UNKNOWN', `rank ${req.rank} is outside a world of ${req.worldSize}`, 'rank');
  if (req.localRank > req.rank)
    reject(
      'RANK_UNKNOWN',
      `local rank ${req.localRank} cannot exceed the global rank ${req.rank}`,
      'localRank',
    );
  const sameJob = ctx.ranks.filter((r) => r.jobId === req.jobId);
  const newer = sameJob.find((r) => r.attempt > req.attempt);
  if (newer)
    reject(
      'RANK_UNKNOWN',
      `attempt ${req.attempt} is superseded: attempt ${newer.attempt} of job ${req.jobId} started here`,
      'attempt',
    );
  const sameAttempt = sameJob.filter((r) => r.attempt === req.attempt);
  const otherWorld = sameAttempt.find((r) => r.worldSize !== req.worldSize);
  if (otherWorld)
    reject(
      'RANK_UNKNOWN',
      `rank ${otherWorld.rank} of this attempt runs in a world of ${otherWorld.worldSize}, not ${req.worldSize}`,
      'worldSize',
    );
  const sameLocal = sameAttempt.find((r) => r.localRank === req.localRank && r.rank !== req.rank);
  if (sameLocal)
    reject('RANK_UNKNOWN', `local rank ${req.localRank} is rank ${sameLocal.rank} here already`, 'localRank');

  // Environment: bounded.
  const entries = Object.keys(req.env).length;
  if (entries > MAX_RANK_ENV_ENTRIES)
    reject('ENV_TOO_LARGE', `${entries} environment variables; at most ${MAX_RANK_ENV_ENTRIES}`, 'env');
  const bytes = envBytes(req.env);
  if (bytes > MAX_RANK_ENV_BYTES)
    reject('ENV_TOO_LARGE', `the environment has ${bytes} bytes; at most ${MAX_RANK_ENV_BYTES}`, 'env');

  // Runtime, image, command.
  if (!ctx.runtimes.has(req.runtime))
    reject(
      'RUNTIME_UNAVAILABLE',
      `this edge does not run ${req.runtime} ranks (it runs: ${[...ctx.runtimes].join(', ') || 'none'})`,
      'runtime',
    );
  if (req.runtime === 'process') {
    if (req.image !== null) reject('INVALID_REQUEST', 'the process runtime runs no image', 'image');
    if (req.cmd.length === 0 && (req.entrypoint ?? []).length === 0)
      reject('INVALID_REQUEST', 'the process runtime needs a command', 'cmd');
    else if ([...(req.entrypoint ?? []), ...req.cmd][0] === '')
      reject('INVALID_REQUEST', 'the command is empty', req.entrypoint?.length ? 'entrypoint[0]' : 'cmd[0]');
  } else if (req.image === null) reject('INVALID_REQUEST', 'the docker runtime needs an image', 'image');
  else if (!imageAllowed(ctx.policy.images, req.image))
    reject(
      'IMAGE_NOT_ALLOWED',
      `image ${req.image} matches none of the allowed prefixes ${ctx.policy.images.join(', ')}`,
      'image',
    );
  const argv = [...(req.entrypoint ?? []), ...req.cmd];
  const nul = argv.findIndex((a) => a.includes('\0'));
  if (nul !== -1) reject('INVALID_REQUEST', 'an argument contains NUL', 'cmd');
  const nulEnv = Object.entries(req.env).find(([, v]) => v.includes('\0'));
  if (nulEnv) reject('INVALID_REQUEST', 'a value contains NUL', `env.${nulEnv[0]}`);

  // Limits: within the reservation.
  if (reservation && reservation.jobId === req.jobId) {
    if (req.limits.cpuMillicores > reservation.cpuMillicores)
      reject(
        'INVALID_REQUEST',
        `${req.limits.cpuMillicores} millicores exceed the reservation's ${reservation.cpuMillicores}`,
        'limits.cpuMillicores',
      );
    if (req.limits.memoryBytes > reservation.memoryBytes)
      reject(
        'INVALID_REQUEST',
        `${req.limits.memoryBytes} bytes of memory exceed the reservation's ${reservation.memoryBytes}`,
        'limits.memoryBytes',
      );
  }

  // Duration and network.
  if (ctx.policy.maxJobDurationMs !== null && req.maxDurationMs > ctx.policy.maxJobDurationMs)
    reject(
      'DURATION_TOO_LONG',
      `jobs may run at most ${ctx.policy.maxJobDurationMs} ms here; asked for ${req.maxDurationMs} ms`,
      'maxDurationMs',
    );
  if (req.overlay !== null && !ctx.overlays)
    reject('RUNTIME_UNAVAILABLE', 'this edge runs no job overlays (network namespaces)', 'overlay');

  if (reasons.length > 0 || !reservation) return { outcome: 'rejected', reasons: reasons.slice(0, 64) };
  const vendor = [...vendors][0] ?? null;
  return { outcome: 'ok', reservation, gpuVendor: vendor };
};
