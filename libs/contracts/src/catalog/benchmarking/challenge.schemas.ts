import { z } from 'zod';
import { EntityIdSchema, text, UtcTimestampSchema } from '../primitives';
import { RequestIdSchema } from './benchmarking.schemas';

/**
 * GPU challenges. The verifier (benchmarking) sends a fresh seed; the edge derives an n×n product's
 * inputs from it, computes the product on the named device at `dtype`, and commits to its rows (a
 * Merkle root) before a deadline derived from the throughput the GPU is placed on; the verifier
 * then opens random rows and checks the whole product with Freivalds' test. Time is taken on the
 * verifier's clock. See ADR 0070.
 */

/** The precisions a challenge computes at (inputs; the accumulation is fp32, exact for these inputs). */
export const CHALLENGE_DTYPES = ['fp16', 'bf16', 'fp32'] as const;
export const ChallengeDtypeSchema = z.enum(CHALLENGE_DTYPES);
export type ChallengeDtype = z.infer<typeof ChallengeDtypeSchema>;

/** 32 bytes, lower-case hex: seeds, Merkle roots and nodes. */
export const Hex32Schema = z.string().regex(/^[0-9a-f]{64}$/, 'must be 32 bytes as 64 lower-case hex digits');

/** Why a challenge runs. */
export const ChallengeReasonSchema = z.enum(['registration', 'idle', 'spot-check', 'manual']);
export type ChallengeReason = z.infer<typeof ChallengeReasonSchema>;

/** How a challenge failed; each is evidence against the provider except `declined` while busy. */
export const ChallengeFailureKindSchema = z.enum([
  /** The commitment arrived after the deadline. */
  'late',
  /** No commitment (or no opening) arrived at all. */
  'no-answer',
  /** The edge refused the challenge. */
  'declined',
  /** An opened row differs from the recomputed one. */
  'wrong-row',
  /** Freivalds' check failed: some element of the committed product is wrong. */
  'wrong-product',
  /** An opened row does not hash to the committed root. */
  'bad-proof',
  /** The answer does not parse or has the wrong shape. */
  'malformed',
]);
export type ChallengeFailureKind = z.infer<typeof ChallengeFailureKindSchema>;

/** What a challenge asked, what came back and when: enough to re-check it offline. */
export const ChallengeEvidenceSchema = z.strictObject({
  seed: Hex32Schema,
  n: z.int().min(16).max(16_384),
  dtype: ChallengeDtypeSchema,
  /** The throughput the deadline was derived from (what placement uses for this GPU), TFLOPS. */
  claimedTflops: z.number().min(0),
  deadlineMs: z.int().min(1),
  /** From sending the challenge to receiving the commitment, on the verifier's clock; null: none came. */
  elapsedMs: z.number().min(0).nullable(),
  root: Hex32Schema.nullable(),
  openedRows: z.array(z.int().min(0)).max(64),
  failure: z.strictObject({ kind: ChallengeFailureKindSchema, detail: text(1000) }).nullable(),
  bytesSent: z.int().min(0),
  bytesReceived: z.int().min(0),
});
export type ChallengeEvidence = z.infer<typeof ChallengeEvidenceSchema>;

/**
 * Where a GPU stands: `pending` (not challenged yet), `verified` (its last challenge passed),
 * `unverified` (a challenge failed: the evidence says why), `simulated` (declared by a simulated
 * edge: never challenged, never verified).
 */
export const GpuVerificationStatusSchema = z.enum(['pending', 'verified', 'unverified', 'simulated']);
export type GpuVerificationStatus = z.infer<typeof GpuVerificationStatusSchema>;

/** One ended challenge, as `provider.challenged` publishes it and the trust query lists it. */
export const challengeRecordFields = {
  challengeId: RequestIdSchema,
  reason: ChallengeReasonSchema,
  /** The job the GPU was running, for a spot check during a job. */
  jobId: EntityIdSchema.nullable(),
  gpuUuid: z.string().min(1).max(128),
  outcome: z.enum(['passed', 'failed']),
  evidence: ChallengeEvidenceSchema,
  at: UtcTimestampSchema,
};
