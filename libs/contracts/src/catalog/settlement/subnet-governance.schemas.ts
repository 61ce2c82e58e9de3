import { z } from 'zod';
import { EntityIdSchema, FaultKindSchema, MinorUnitsSchema, text } from '../primitives';
import { SlashDestinationSchema, SubnetParametersSchema } from './subnet-parameters.schemas';

/** A proposal's id: chosen by the proposer (idempotent), unique in its subnet. */
export const ProposalIdSchema = EntityIdSchema;

/** A slash's id: derived from its evidence (`slash-` + 32 hex digits), so evidence seen twice slashes once. */
export const SlashIdSchema = z.string().regex(/^slash-[0-9a-f]{32}$/, 'must be slash- and 32 hex digits');

/** What a proposal changes if it passes. */
export const ProposalChangeSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    /** A new version of the subnet's parameters (every field: the whole new set). */
    kind: z.literal('parameters'),
    parameters: SubnetParametersSchema,
  }),
  z.strictObject({
    /** An appeal: the held slash is cancelled if the proposal passes, taken if it fails. */
    kind: z.literal('overturn-slash'),
    slashId: SlashIdSchema,
  }),
]);
export type ProposalChange = z.infer<typeof ProposalChangeSchema>;

export const VoteChoiceSchema = z.enum(['yes', 'no', 'abstain']);

/** Why a slash was proposed: the evidence, from the service that found it. */
export const SlashEvidenceSchema = z.strictObject({
  kind: FaultKindSchema,
  /** `challenge`: benchmarking's failed GPU challenge; `job-fault`: execution's verified fault; `usage-dispute`: execution's lost dispute. */
  source: z.enum(['challenge', 'job-fault', 'usage-dispute']),
  /** The job the fault happened in; null for a challenge outside a job. */
  jobId: EntityIdSchema.nullable(),
  /** The evidence's own id: the challenge id, or `<job>/<attempt>/<rank>` of a dispute, or the job id. */
  reference: text(256),
  /** For people: what happened. */
  detail: z.string().max(1024),
});
export type SlashEvidence = z.infer<typeof SlashEvidenceSchema>;

/** One staker's part of a slash: the provider's own stake, or one delegator's, pro rata. */
export const SlashShareSchema = z.strictObject({
  /** The provider itself, or a delegator. */
  stakerId: EntityIdSchema,
  role: z.enum(['provider', 'delegator']),
  amount: MinorUnitsSchema,
});
export type SlashShare = z.infer<typeof SlashShareSchema>;

export { SlashDestinationSchema };
