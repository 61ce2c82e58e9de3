import {
  type ChallengeFailureKind,
  type GpuBenchmarked,
  type GpuVerificationChanged,
  type GpuVerificationStatus,
  type LinkMeasured,
  MATMUL_PRECISIONS,
  type MatmulPrecision,
  type NetworkCoordinatesRefitted,
  type PayloadOf,
  type ProviderChallenged,
  type ProviderReliabilityChanged,
} from '@gpunet/contracts';

/*
 * The scheduler's projection of benchmarking's measurements, as plain rows (pure). The consumers
 * (`app/measurements.handler.ts`) turn `gpu.benchmarked`, `link.measured` and
 * `network.coordinates.refitted` into these rows; the engine loads those of a round's candidates
 * in one query and `placement-input.ts` maps the live ones into the snapshot. Times are ms since
 * the epoch; a row past its `expiresAtMs` is ignored (the figure falls back to an estimate).
 */

/** One measured GPU of a profile: matched to discovery's GPU by uuid, else by index. */
export interface MeasuredGpu {
  readonly index: number;
  readonly uuid: string | null;
  /** Dense matmul TFLOPS per precision the runner measured (precisions it skipped are absent). */
  readonly tflops: Readonly<Partial<Record<MatmulPrecision, number>>>;
}

/** A provider's newest GPU profile (`gpu.benchmarked`). */
export interface ProfileRow {
  readonly providerId: string;
  /** The edge's inventory is declared: the figures are its declared ones with noise, not a run. */
  readonly simulated: boolean;
  readonly measuredAtMs: number;
  readonly expiresAtMs: number;
  readonly gpus: readonly MeasuredGpu[];
  /** GPU-to-GPU copy bandwidth inside the host, by device index (`a < b`), bits/s. */
  readonly peers: readonly { readonly a: number; readonly b: number; readonly bandwidthBps: number }[];
}

/** One direction of a measured link (`link.measured`), the newest per (a, b). */
export interface LinkRow {
  /** The prober (sender). */
  readonly a: string;
  readonly b: string;
  readonly rttUs: number;
  /** a → b throughput, bits/s; null when no transfer ran (an RTT-only probe). */
  readonly throughputBps: number | null;
  readonly sameSite: boolean;
  /** Measured through a job's relay: what a job on the pair gets, not the hosts' own network. */
  readonly relayed: boolean;
  readonly measuredAtMs: number;
  readonly expiresAtMs: number;
}

/** A host's coordinate and same-site group from benchmarking's last fit that changed it. */
export interface CoordinateRow {
  readonly hostId: string;
  readonly x: number;
  readonly y: number;
  readonly height: number;
  readonly error: number;
  readonly siteId: string;
  readonly fittedAtMs: number;
  readonly expiresAtMs: number;
}

/** A provider's GPUs' verification (`gpu.verification-changed`), the newest per provider. */
export interface VerificationRow {
  readonly providerId: string;
  /** Every GPU of the provider with its status then. */
  readonly gpus: readonly { readonly uuid: string; readonly status: GpuVerificationStatus }[];
  readonly cause: PayloadOf<typeof GpuVerificationChanged>['cause'];
  readonly challengeId: string | null;
  readonly atMs: number;
}

/** A provider's reliability score (`provider.reliability-changed`), the newest per provider. */
export interface ReliabilityRow {
  readonly providerId: string;
  /** 0 … 1. */
  readonly score: number;
  readonly atMs: number;
}

/** A failed challenge of one GPU (`provider.challenged`, outcome failed): the newest per GPU. */
export interface ChallengeFailureRow {
  readonly challengeId: string;
  readonly providerId: string;
  readonly gpuUuid: string;
  readonly kind: ChallengeFailureKind;
  readonly atMs: number;
}

/** What the projection holds for a round's candidate providers. */
export interface Measurements {
  readonly profiles: ReadonlyMap<string, ProfileRow>;
  /** Links between two of the candidates (both directions, as stored). */
  readonly links: readonly LinkRow[];
  readonly coordinates: ReadonlyMap<string, CoordinateRow>;
  /** By provider id. Verification never expires: it stands until the next change. */
  readonly verification: ReadonlyMap<string, VerificationRow>;
  /** By provider id; a provider without a row is scored at the default. */
  readonly reliability: ReadonlyMap<string, ReliabilityRow>;
  /** The newest failed challenge by GPU uuid. */
  readonly challengeFailures: ReadonlyMap<string, ChallengeFailureRow>;
}

export const NO_MEASUREMENTS: Measurements = {
  profiles: new Map(),
  links: [],
  coordinates: new Map(),
  verification: new Map(),
  reliability: new Map(),
  challengeFailures: new Map(),
};

/** Bits per second in one GB/s (profiles print copy bandwidth as data sheets do). */
const BITS_PER_GBPS = 8e9;

/** A `gpu.benchmarked` as the projection's row. Devices that are not GPUs (a CPU run) are left out. */
export const profileRowOf = (event: PayloadOf<typeof GpuBenchmarked>): ProfileRow => {
  const { profile } = event;
  return {
    providerId: event.providerId,
    simulated: event.simulated || profile.kind === 'simulated',
    measuredAtMs: Date.parse(profile.measuredAt),
    expiresAtMs: Date.parse(profile.expiresAt),
    gpus: profile.devices
      .filter((d) => d.kind !== 'cpu')
      .map((d) => {
        const tflops: Partial<Record<MatmulPrecision, number>> = {};
        for (const p of MATMUL_PRECISIONS) {
          const v = d.matmulTflops[p];
          if (v !== null) tflops[p] = v;
        }
        return { index: d.index, uuid: d.uuid, tflops };
      }),
    peers: profile.peers.map((p) => ({ a: p.a, b: p.b, bandwidthBps: p.GBps * BITS_PER_GBPS })),
  };
};

/** A `link.measured` as the projection's row. */
export const linkRowOf = (event: PayloadOf<typeof LinkMeasured>): LinkRow => ({
  a: event.a,
  b: event.b,
  rttUs: event.rttUs,
  throughputBps: event.throughputBitsPerSecond,
  sameSite: event.sameSite,
  relayed: event.relayed === true,
  measuredAtMs: Date.parse(event.measuredAt),
  expiresAtMs: Date.parse(event.expiresAt),
});

/** A `network.coordinates.refitted` as the projection's rows, one per host it names. */
export const coordinateRowsOf = (event: PayloadOf<typeof NetworkCoordinatesRefitted>): CoordinateRow[] =>
  event.hosts.map((h) => ({
    hostId: h.hostId,
    x: h.x,
    y: h.y,
    height: h.height,
    error: h.error,
    siteId: h.siteId,
    fittedAtMs: Date.parse(event.fittedAt),
    expiresAtMs: Date.parse(event.expiresAt),
  }));

/** A `gpu.verification-changed` as the projection's row. */
export const verificationRowOf = (event: PayloadOf<typeof GpuVerificationChanged>): VerificationRow => ({
  providerId: event.providerId,
  gpus: event.gpus.map((g) => ({ uuid: g.uuid, status: g.status })),
  cause: event.cause,
  challengeId: event.challengeId,
  atMs: Date.parse(event.at),
});

/** A `provider.reliability-changed` as the projection's row. */
export const reliabilityRowOf = (event: PayloadOf<typeof ProviderReliabilityChanged>): ReliabilityRow => ({
  providerId: event.providerId,
  score: event.score,
  atMs: Date.parse(event.at),
});

/** A failed `provider.challenged` as the projection's row; null for a passed one (nothing to keep). */
export const challengeFailureRowOf = (
  event: PayloadOf<typeof ProviderChallenged>,
): ChallengeFailureRow | null => {
  const failure = event.evidence.failure;
  if (event.outcome !== 'failed' || failure === null) return null;
  return {
    challengeId: event.challengeId,
    providerId: event.providerId,
    gpuUuid: event.gpuUuid,
    kind: failure.kind,
    atMs: Date.parse(event.at),
  };
};

/**
 * Whether a verification change can make a parked job placeable: some GPU is `verified` now that
 * was not before (or `simulated`, newly known). A GPU losing its verification frees nothing, so
 * nothing is woken for it; the next round excludes it anyway.
 */
export const verifiesMore = (before: VerificationRow | null, after: VerificationRow): boolean => {
  const was = new Map((before?.gpus ?? []).map((g) => [g.uuid, g.status]));
  return after.gpus.some(
    (g) => (g.status === 'verified' || g.status === 'simulated') && was.get(g.uuid) !== g.status,
  );
};

/** A GPU's verification as the snapshot takes it: its status and, when unverified, why. */
export interface GpuTrustView {
  readonly verification: GpuVerificationStatus | null;
  readonly note: string | null;
}

/**
 * One GPU's verification from the provider's newest row (null: nothing reported) and, for an
 * unverified GPU, the challenge that failed: its own newest failure with its kind, else the
 * change's challenge when a failed challenge caused it.
 */
export const gpuTrustOf = (
  uuid: string,
  row: VerificationRow | undefined,
  failures: ReadonlyMap<string, ChallengeFailureRow>,
): GpuTrustView => {
  const status = row?.gpus.find((g) => g.uuid === uuid)?.status ?? null;
  if (status !== 'unverified') return { verification: status, note: null };
  const failure = failures.get(uuid);
  if (failure !== undefined)
    return { verification: status, note: `challenge ${failure.challengeId} failed (${failure.kind})` };
  if (row?.cause === 'challenge-failed' && row.challengeId !== null)
    return { verification: status, note: `challenge ${row.challengeId} failed` };
  return { verification: status, note: null };
};

/** A host pair's link as the snapshot takes it, from the live rows of both directions. */
export interface PairLink {
  readonly a: string;
  readonly b: string;
  /** The lower of the two directions' RTTs. */
  readonly rttUs: number;
  /** The lower of the directions' measured throughputs; null when neither ran a transfer. */
  readonly bandwidthBps: number | null;
  readonly sameSite: boolean;
  readonly relayed: boolean;
  /** The newest measurement's time. */
  readonly measuredAtMs: number;
}

/**
 * Live link rows (not expired at `atMs`) merged per unordered host pair. The newest measurement
 * decides whether the pair is relayed: a pair last measured through a relay is taken at the relay's
 * figures (that is what a job there would get), one last measured directly at the direct ones; rows
 * of the other kind are left out.
 */
export const pairLinks = (rows: readonly LinkRow[], atMs: number): PairLink[] => {
  const byPair = new Map<string, LinkRow[]>();
  for (const r of rows) {
    if (r.expiresAtMs <= atMs || r.a === r.b) continue;
    const key = r.a < r.b ? `${r.a}\u0000${r.b}` : `${r.b}\u0000${r.a}`;
    const list = byPair.get(key);
    if (list === undefined) byPair.set(key, [r]);
    else list.push(r);
  }
  const out: PairLink[] = [];
  for (const list of byPair.values()) {
    const newest = list.reduce((x, y) => (y.measuredAtMs > x.measuredAtMs ? y : x));
    const same = list.filter((r) => r.relayed === newest.relayed);
    const throughputs = same.flatMap((r) => (r.throughputBps === null ? [] : [r.throughputBps]));
    const [a, b] = newest.a < newest.b ? [newest.a, newest.b] : [newest.b, newest.a];
    out.push({
      a,
      b,
      rttUs: Math.min(...same.map((r) => r.rttUs)),
      bandwidthBps: throughputs.length === 0 ? null : Math.min(...throughputs),
      sameSite: !newest.relayed && same.every((r) => r.sameSite),
      relayed: newest.relayed,
      measuredAtMs: newest.measuredAtMs,
    });
  }
  return out.sort((x, y) => (x.a === y.a ? (x.b < y.b ? -1 : 1) : x.a < y.a ? -1 : 1));
};
