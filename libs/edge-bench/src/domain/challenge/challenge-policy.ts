import { toHex } from './sha256';

/** How big a challenge is and how long it may take (ADR 0070). */
export interface ChallengePolicy {
  /** Work time at the claimed throughput the size aims for, ms. Default 50. */
  readonly targetMs: number;
  /** Smallest n (a multiple of 16). Default 256. */
  readonly minN: number;
  /** Largest n (a multiple of 16, at most 16 384). Default 4 096: the verifier's O(n²) stays well under a second. */
  readonly maxN: number;
  /** Deadline = allowanceMs + slack × (work at the claimed figure) + hashing at hashBytesPerSecond. Default 4. */
  readonly slack: number;
  /** Round trip, worker dispatch and device-to-host copy, ms. Default 500. */
  readonly allowanceMs: number;
  /** How fast a slow edge host hashes the product's n²·4 bytes (SHA-256 on one core). Default 200e6. */
  readonly hashBytesPerSecond: number;
  /** Rows opened after the commitment (at most 64). Default 8. */
  readonly openRows: number;
}

export const DEFAULT_CHALLENGE_POLICY: ChallengePolicy = Object.freeze({
  targetMs: 50,
  minN: 256,
  maxN: 4096,
  slack: 4,
  allowanceMs: 500,
  hashBytesPerSecond: 200e6,
  openRows: 8,
});

/** The contract's bound on a challenge's deadline. */
const MAX_DEADLINE_MS = 600_000;

/** n (a multiple of 16 within the policy's bounds) and the deadline for a claimed throughput. */
export const sizeChallenge = (
  claimedTflops: number,
  policy: ChallengePolicy,
): { n: number; deadlineMs: number } => {
  if (!Number.isFinite(claimedTflops) || claimedTflops <= 0)
    throw new RangeError(`claimedTflops: must be a positive number, not ${claimedTflops}`);
  if (
    policy.minN % 16 !== 0 ||
    policy.maxN % 16 !== 0 ||
    policy.minN < 16 ||
    policy.maxN > 16_384 ||
    policy.minN > policy.maxN
  )
    throw new RangeError(`policy: minN and maxN must be multiples of 16 with 16 ≤ minN ≤ maxN ≤ 16384`);
  const flopsPerMs = claimedTflops * 1e9;
  const ideal = Math.cbrt((policy.targetMs * flopsPerMs) / 2);
  const n = Math.min(policy.maxN, Math.max(policy.minN, Math.round(ideal / 16) * 16));
  const workMs = (2 * n ** 3) / flopsPerMs;
  const hashMs = ((n * n * 4) / policy.hashBytesPerSecond) * 1000;
  const deadlineMs = Math.min(
    MAX_DEADLINE_MS,
    Math.ceil(policy.allowanceMs + policy.slack * workMs + hashMs),
  );
  return { n, deadlineMs };
};

/** The rows to open (distinct, ascending) and a fresh Freivalds seed, chosen after the commitment. */
export const newOpening = (
  n: number,
  openRows: number,
  randomBytes: (size: number) => Uint8Array,
): { rows: number[]; freivaldsSeed: string } => {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n: must be a positive integer, not ${n}`);
  if (!Number.isInteger(openRows) || openRows < 1 || openRows > Math.min(64, n))
    throw new RangeError(`openRows: must be an integer in [1, ${Math.min(64, n)}], not ${openRows}`);
  // Rejection sampling: a u32 below the largest multiple of n is uniform modulo n.
  const limit = Math.floor(2 ** 32 / n) * n;
  const rows = new Set<number>();
  while (rows.size < openRows) {
    const b = randomBytes(4);
    const u = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
    if (u < limit) rows.add(u % n);
  }
  return { rows: [...rows].sort((x, y) => x - y), freivaldsSeed: toHex(randomBytes(32)) };
};
