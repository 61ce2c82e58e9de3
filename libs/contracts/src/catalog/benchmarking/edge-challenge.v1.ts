import { z } from 'zod';
import { defineCommand } from '../../message';
import { CORE_REQUEST_REPLY } from '../streams';
import { RequestIdSchema } from './benchmarking.schemas';
import { ChallengeDtypeSchema, Hex32Schema } from './challenge.schemas';

/** Why an edge declined a challenge or its opening. */
export const ChallengeDeclineCodeSchema = z.enum([
  'BUSY',
  'SIMULATED',
  'UNKNOWN_GPU',
  'UNSUPPORTED_DTYPE',
  'UNKNOWN_CHALLENGE',
  'INVALID_REQUEST',
]);

export const RunChallengeOnEdge = defineCommand({
  type: 'edge.challenge',
  version: 1,
  subject: 'cmd.edge.{edgeId}.challenge.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    "Compute the seed's n×n product on one GPU and answer with the Merkle root of its rows before the deadline (ADR 0070).",
  schema: z.strictObject({
    challengeId: RequestIdSchema,
    seed: Hex32Schema,
    gpuUuid: z.string().min(1).max(128),
    n: z.int().min(16).max(16_384),
    dtype: ChallengeDtypeSchema,
    /** The edge may stop computing after this long; the verifier times the answer on its own clock. */
    deadlineMs: z.int().min(1).max(600_000),
  }),
});

/** The answer to `RunChallengeOnEdge`: the commitment, or why not. */
export const ChallengeCommitReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({
    outcome: z.literal('committed'),
    challengeId: RequestIdSchema,
    /** Merkle root over the product's rows (ADR 0070). */
    root: Hex32Schema,
    /** The edge's own account of the time it spent (informative; never trusted). */
    edgeComputeMs: z.number().min(0),
  }),
  z.strictObject({
    outcome: z.literal('declined'),
    challengeId: RequestIdSchema,
    code: ChallengeDeclineCodeSchema,
    message: z.string().max(512),
  }),
]);
export type ChallengeCommitReply = z.infer<typeof ChallengeCommitReplySchema>;

export const OpenChallengeOnEdge = defineCommand({
  type: 'edge.challenge-open',
  version: 1,
  subject: 'cmd.edge.{edgeId}.challenge-open.v1',
  stream: CORE_REQUEST_REPLY,
  description:
    'Open a committed challenge: the named rows with their Merkle proofs, and the product times the vector derived from `freivaldsSeed`.',
  schema: z.strictObject({
    challengeId: RequestIdSchema,
    rows: z.array(z.int().min(0).max(16_383)).min(1).max(64),
    /** Chosen after the commitment; the edge derives Freivalds' vector from it (ADR 0070). */
    freivaldsSeed: Hex32Schema,
  }),
});

/** The answer to `OpenChallengeOnEdge`. */
export const ChallengeOpenReplySchema = z.discriminatedUnion('outcome', [
  z.strictObject({
    outcome: z.literal('opened'),
    challengeId: RequestIdSchema,
    rows: z
      .array(
        z.strictObject({
          index: z.int().min(0),
          /** The row's n values (integers: the inputs make every product exact). */
          values: z.array(z.number()).max(16_384),
          /** Sibling hashes from the leaf up to the root. */
          proof: z.array(Hex32Schema).max(15),
        }),
      )
      .max(64),
    /** C·r, n integers. */
    product: z.array(z.number()).max(16_384),
  }),
  z.strictObject({
    outcome: z.literal('declined'),
    challengeId: RequestIdSchema,
    code: ChallengeDeclineCodeSchema,
    message: z.string().max(512),
  }),
]);
export type ChallengeOpenReply = z.infer<typeof ChallengeOpenReplySchema>;
