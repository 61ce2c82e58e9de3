import { z } from 'zod';
import { defineEvent } from '../../message';
import { EntityIdSchema, MinorUnitsSchema, TimestampSchema } from '../primitives';
import { SettlementStream } from '../streams';

/**
 * Whether a provider may be offered to a subnet's jobs. `good`: an active member whose own stake is
 * at least the subnet's current minimum and who is not jailed. The scheduler places by it.
 */
export const MemberStandingSchema = z.enum([
  'good',
  'below-minimum-stake',
  'jailed',
  'unbonding',
  'released',
]);
export type MemberStanding = z.infer<typeof MemberStandingSchema>;

export const SubnetMemberStandingChanged = defineEvent({
  type: 'subnet.member-standing-changed',
  version: 1,
  subject: 'settlement.subnet.member-standing-changed.v1',
  stream: SettlementStream.name,
  description:
    "A provider's standing in a subnet changed (joined, slashed below the minimum, jailed, left, the minimum raised …): placement offers only members in good standing.",
  schema: z.strictObject({
    subnetId: EntityIdSchema,
    providerId: EntityIdSchema,
    standing: MemberStandingSchema,
    /** The provider's own stake now, and the subnet's minimum. */
    stake: MinorUnitsSchema,
    minStake: MinorUnitsSchema,
    /** Until when it is jailed (standing `jailed`); it is in good standing again after, unless something else holds. */
    jailedUntil: TimestampSchema.nullable(),
    changedAt: TimestampSchema,
  }),
});
