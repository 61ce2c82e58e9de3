import {
  challengeEntry,
  type ChallengePolicy,
  type ChallengeVerdict,
  DEFAULT_CHALLENGE_POLICY,
  newOpening,
  sizeChallenge,
  verifyOpening,
} from '@gpunet/edge-bench';

/**
 * The challenge's arithmetic (ADR 0070) as the verifier uses it: sizing a challenge for a claimed
 * throughput, choosing the rows to open after the commitment, and checking the opening. A port so
 * that tests whose subject is the message flow, not the math, can stand in for it; production uses
 * `@gpunet/edge-bench`'s (`EDGE_BENCH_CHALLENGE_MATH`), which the edge computes against too.
 */
export interface ChallengeMath {
  /** The policy the service's overrides apply to (`DEFAULT_CHALLENGE_POLICY`). */
  defaultPolicy(): ChallengePolicy;
  sizeChallenge(claimedTflops: number, policy: ChallengePolicy): { n: number; deadlineMs: number };
  newOpening(
    n: number,
    openRows: number,
    randomBytes: (size: number) => Uint8Array,
  ): { rows: number[]; freivaldsSeed: string };
  verifyOpening(input: Parameters<typeof verifyOpening>[0]): ChallengeVerdict;
  challengeEntry(seed: string, matrix: 'A' | 'B', row: number, col: number): number;
}

export const EDGE_BENCH_CHALLENGE_MATH: ChallengeMath = {
  defaultPolicy: () => DEFAULT_CHALLENGE_POLICY,
  sizeChallenge: (claimedTflops, policy) => sizeChallenge(claimedTflops, policy),
  newOpening: (n, openRows, randomBytes) => newOpening(n, openRows, randomBytes),
  verifyOpening: (input) => verifyOpening(input),
  challengeEntry: (seed, matrix, row, col) => challengeEntry(seed, matrix, row, col),
};

/**
 * The verifier's own clock for timing an edge's answer: monotonic milliseconds (never the business
 * clock, which tests fake and which may jump). Default `performance.now()`.
 */
export interface MonotonicClock {
  nowMs(): number;
}

export const PERFORMANCE_CLOCK: MonotonicClock = { nowMs: () => performance.now() };
