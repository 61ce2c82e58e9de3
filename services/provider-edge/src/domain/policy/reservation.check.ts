import type {
  DeclineReason,
  EdgeReservation,
  Host,
  Inventory,
  PayloadOf,
  ReserveOnEdge,
} from '@gpunet/contracts';
import { formatMoney } from '@gpunet/ensemble-spec';
import { availableUntil, isolationAtLeast, UNREPORTED_ISOLATION } from '@gpunet/contracts';
import type { Policy } from './policy';
import { floorFor, shareableResources } from './shared-gpus';

export type ReservationRequest = PayloadOf<typeof ReserveOnEdge>;

/** Everything the edge knows when a reservation arrives. */
export interface EdgeSnapshot {
  readonly policy: Policy;
  readonly inventory: Inventory;
  /** `isolation`: what ranks run with; absent is taken as `UNREPORTED_ISOLATION` (host processes). */
  readonly host: Pick<Host, 'cpu' | 'memoryBytes' | 'isolation'>;
  /** UUIDs the policy shares (`resolveSharedGpus`). */
  readonly sharedUuids: readonly string[];
  readonly reservations: readonly EdgeReservation[];
  /** Reservations ranks run on, and until when (ms) they stay in use whatever their hold says. */
  readonly inUseUntil?: ReadonlyMap<string, number>;
}

export type ReservationDecision =
  | { readonly outcome: 'accepted'; readonly reservation: EdgeReservation; readonly repeated: boolean }
  | { readonly outcome: 'declined'; readonly reasons: readonly DeclineReason[] };

/**
 * Reservations still holding at `nowMs`: before their `expiresAt` (the hold), or — once ranks
 * started on them — until `inUseUntil` says (ms by reservation id): a reservation in use does not
 * lapse at its hold's end (the rank agent's `inUseUntil`).
 */
export const activeReservations = (
  reservations: readonly EdgeReservation[],
  nowMs: number,
  inUseUntil: ReadonlyMap<string, number> = new Map(),
): EdgeReservation[] =>
  reservations.filter(
    (r) => Date.parse(r.expiresAt) > nowMs || (inUseUntil.get(r.reservationId) ?? -Infinity) > nowMs,
  );

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The edge's own check of a reservation against its policy, its hardware and what it already holds
 * (each edge re-checks and accepts or declines). Every reason is reported, not only
 * the first, each with the request field at fault. Pure: the time comes in as `nowMs`.
 *
 * A reservation id seen before is answered the same way again when the request is the same
 * (idempotent retries) and declined as a conflict when it differs.
 */
export const checkReservation = (
  snapshot: EdgeSnapshot,
  request: ReservationRequest,
  nowMs: number,
): ReservationDecision => {
  const { policy, inventory } = snapshot;
  const active = activeReservations(snapshot.reservations, nowMs, snapshot.inUseUntil);
  const reasons: DeclineReason[] = [];
  const decline = (code: DeclineReason['code'], message: string, field: string | null) =>
    reasons.push({ code, message: message.slice(0, 512), field });

  const candidate: EdgeReservation = {
    reservationId: request.reservationId,
    jobId: request.jobId,
    gpuUuids: [...new Set(request.gpuUuids)],
    cpuMillicores: request.cpuMillicores,
    memoryBytes: request.memoryBytes,
    expiresAt: request.holdUntil,
  };
  const same = active.find((r) => r.reservationId === request.reservationId);
  if (same) {
    if (sameReservation(same, candidate)) return { outcome: 'accepted', reservation: same, repeated: true };
    decline(
      'RESERVATION_CONFLICT',
      `reservation ${request.reservationId} exists with other terms`,
      'reservationId',
    );
    return { outcome: 'declined', reasons };
  }
  const others = active;

  const holdUntil = Date.parse(request.holdUntil);
  if (!(holdUntil > nowMs))
    decline(
      'HOLD_EXPIRED',
      `the hold ended at ${request.holdUntil}, before the edge got it (${iso(nowMs)})`,
      'holdUntil',
    );

  // GPUs
  const shared = new Set(snapshot.sharedUuids);
  const busy = new Map(others.flatMap((r) => r.gpuUuids.map((u) => [u, r.jobId] as const)));
  // Debian's runsc has no nvproxy: a gVisor edge runs ranks with simulated GPUs, never real ones.
  const gvisorWithoutGpus = snapshot.host.isolation?.level === 'gvisor' && !inventory.simulated;
  const gpus = candidate.gpuUuids.flatMap((uuid) => {
    const field = `gpuUuids[${request.gpuUuids.indexOf(uuid)}]`;
    const gpu = inventory.gpus.find((g) => g.uuid === uuid);
    if (!gpu) {
      decline('GPU_UNKNOWN', `this host has no GPU ${uuid}`, field);
      return [];
    }
    if (!shared.has(uuid))
      decline(
        'GPU_NOT_SHARED',
        `the provider does not share GPU ${gpu.vendor}:${gpu.index} (${uuid})`,
        field,
      );
    else if (gvisorWithoutGpus)
      decline(
        'GPU_NOT_SHARED',
        `this edge runs rank containers on gVisor (runsc), which cannot give a container GPU ${gpu.vendor}:${gpu.index}: CPU jobs only (policy sandbox.runtime: runc shares GPUs)`,
        field,
      );
    else if (busy.has(uuid)) decline('GPU_BUSY', `GPU ${uuid} is reserved for job ${busy.get(uuid)}`, field);
    return [gpu];
  });
  if (candidate.gpuUuids.length > policy.maxGpusPerJob)
    decline(
      'TOO_MANY_GPUS',
      `asked for ${candidate.gpuUuids.length} GPUs; the provider gives at most ${policy.maxGpusPerJob} per job`,
      'gpuUuids',
    );

  // CPU and memory
  const shareable = shareableResources(policy, snapshot.host);
  const cpuFree = shareable.cpuMillicores - others.reduce((s, r) => s + r.cpuMillicores, 0);
  if (request.cpuMillicores > cpuFree)
    decline(
      'CPU_UNAVAILABLE',
      `asked for ${request.cpuMillicores} millicores; ${Math.max(0, cpuFree)} are free to share`,
      'cpuMillicores',
    );
  const memoryFree = shareable.memoryBytes - others.reduce((s, r) => s + r.memoryBytes, 0);
  if (request.memoryBytes > memoryFree)
    decline(
      'MEMORY_UNAVAILABLE',
      `asked for ${request.memoryBytes} bytes of memory; ${Math.max(0, memoryFree)} are free to share`,
      'memoryBytes',
    );

  // Image
  if (request.image !== null && !imageAllowed(policy.images, request.image))
    decline(
      'IMAGE_NOT_ALLOWED',
      `image ${request.image} matches none of the allowed prefixes ${policy.images.join(', ')}`,
      'image',
    );

  // Price
  if (request.asset !== policy.pricing.asset) {
    decline(
      'ASSET_NOT_ACCEPTED',
      `the provider prices in ${policy.pricing.asset}, not ${request.asset}`,
      'asset',
    );
  } else {
    const offered = BigInt(request.pricePerGpuHourMinor);
    const floors = gpus.map((g) => ({ gpu: g, floor: floorFor(policy, g.model) }));
    const highest = floors.reduce<{ model: string; floor: bigint } | null>(
      (max, f) =>
        f.floor !== null && (max === null || f.floor > max.floor)
          ? { model: f.gpu.model, floor: f.floor }
          : max,
      null,
    );
    if (highest !== null && offered < highest.floor) {
      const d = policy.pricing.decimals;
      decline(
        'PRICE_BELOW_FLOOR',
        `offered ${formatMoney(offered, d)} ${request.asset}/GPU-hour; the floor for ${highest.model} is ${formatMoney(highest.floor, d)}`,
        'pricePerGpuHourMinor',
      );
    }
  }

  // Isolation: the job's subnet names the weakest it accepts.
  const isolation = snapshot.host.isolation ?? UNREPORTED_ISOLATION;
  if (!isolationAtLeast(isolation.level, request.minimumIsolation))
    decline(
      'ISOLATION_TOO_WEAK',
      `the job's subnet requires isolation ${request.minimumIsolation} or stronger; this edge runs ranks as ${isolation.level} (${isolation.detail})`,
      'minimumIsolation',
    );

  // Subnet, duration, availability
  if (request.subnet !== null && !policy.subnets.includes(request.subnet))
    decline(
      'SUBNET_NOT_JOINED',
      `the provider joined ${policy.subnets.join(', ')}, not ${request.subnet}`,
      'subnet',
    );
  if (policy.maxJobDurationMs !== null && request.maxDurationMs > policy.maxJobDurationMs)
    decline(
      'DURATION_TOO_LONG',
      `jobs may run at most ${policy.maxJobDurationMs} ms here; asked for ${request.maxDurationMs} ms`,
      'maxDurationMs',
    );
  const until = availableUntil(policy.availability, nowMs);
  if (until === null)
    decline(
      'OUTSIDE_AVAILABILITY',
      `the provider does not accept jobs at ${iso(nowMs)} (${policy.availability?.timeZone ?? 'UTC'})`,
      null,
    );
  else if (until !== 'always' && nowMs + request.maxDurationMs > until)
    decline(
      'OUTSIDE_AVAILABILITY',
      `the job could run past the end of the availability window at ${iso(until)}`,
      'maxDurationMs',
    );

  if (reasons.length > 0) return { outcome: 'declined', reasons: reasons.slice(0, 64) };
  return { outcome: 'accepted', reservation: candidate, repeated: false };
};

/** `*` allows any image; otherwise the image must start with an allowed prefix. */
export const imageAllowed = (prefixes: readonly string[], image: string): boolean =>
  prefixes.some((p) => p === '*' || image.startsWith(p));

const sameReservation = (a: EdgeReservation, b: EdgeReservation): boolean =>
  a.jobId === b.jobId &&
  a.cpuMillicores === b.cpuMillicores &&
  a.memoryBytes === b.memoryBytes &&
  a.expiresAt === b.expiresAt &&
  a.gpuUuids.length === b.gpuUuids.length &&
  a.gpuUuids.every((u) => b.gpuUuids.includes(u));
