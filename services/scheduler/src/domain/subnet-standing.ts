import type { MemberStanding, PayloadOf, SubnetMemberStandingChanged } from '@gpunet/contracts';

/*
 * The scheduler's projection of settlement's word on who may run a subnet's jobs (pure): one row
 * per (subnet, provider), the last `subnet.member-standing-changed` in the SETTLEMENT stream's order
 * winning. Placement offers a job only providers in good standing in its subnet
 * (`subnet-standing.filter.ts`); a jail counts as good once its `jailedUntil` has passed on the
 * scheduler's clock. A provider with no row is not a member.
 */

/** A provider's last standing in one subnet. */
export interface StandingRow {
  readonly subnetId: string;
  readonly providerId: string;
  readonly standing: MemberStanding;
  /** Own stake and the subnet's minimum then, minor units (quoted when below it). */
  readonly stake: string;
  readonly minStake: string;
  /** When a `jailed` standing ends; null otherwise. */
  readonly jailedUntilMs: number | null;
  readonly changedAtMs: number;
  /** The event's sequence in the SETTLEMENT stream: a later one replaces an earlier one. */
  readonly seq: number;
}

/** A `subnet.member-standing-changed` as the projection's row, at its place in the stream. */
export const standingRowOf = (
  event: PayloadOf<typeof SubnetMemberStandingChanged>,
  seq: number,
): StandingRow => ({
  subnetId: event.subnetId,
  providerId: event.providerId,
  standing: event.standing,
  stake: event.stake,
  minStake: event.minStake,
  jailedUntilMs: event.jailedUntil === null ? null : Date.parse(event.jailedUntil),
  changedAtMs: Date.parse(event.changedAt),
  seq,
});

/** Whether the provider may be offered at `atMs`: good, or jailed until a time that has passed. */
export const inGoodStanding = (row: StandingRow | undefined, atMs: number): boolean =>
  row !== undefined &&
  (row.standing === 'good' ||
    (row.standing === 'jailed' && row.jailedUntilMs !== null && row.jailedUntilMs <= atMs));

/**
 * Whether a standing change can make a parked job placeable at `atMs`: the provider is in good
 * standing now and was not before. A provider losing its standing frees nothing (the next round
 * leaves it out); a jail that ends later wakes jobs then (the engine arms that from the rounds that
 * met it, `jailEndsAfter`).
 */
export const standsBetter = (before: StandingRow | null, after: StandingRow, atMs: number): boolean =>
  inGoodStanding(after, atMs) && !inGoodStanding(before ?? undefined, atMs);

/** When a provider jailed at `atMs` is in good standing again; null when it is not jailed then. */
export const jailEndsAfter = (row: StandingRow | undefined, atMs: number): number | null =>
  row?.standing === 'jailed' && row.jailedUntilMs !== null && row.jailedUntilMs > atMs
    ? row.jailedUntilMs
    : null;

/** Why a provider is not in good standing, for people: `below-minimum-stake: stake 5 of minimum 10`. */
export const standingInWords = (row: StandingRow | undefined): string => {
  if (row === undefined) return 'no standing reported';
  switch (row.standing) {
    case 'below-minimum-stake':
      return `below-minimum-stake: stake ${row.stake} of minimum ${row.minStake}`;
    case 'jailed':
      return row.jailedUntilMs === null
        ? 'jailed'
        : `jailed until ${new Date(row.jailedUntilMs).toISOString()}`;
    case 'good':
    case 'unbonding':
    case 'released':
      return row.standing;
    default: {
      const never: never = row.standing;
      return never;
    }
  }
};
