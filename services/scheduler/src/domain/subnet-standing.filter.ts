import { type FilterPlugin, type Status, SUCCESS, unschedulable } from '@gpunet/scheduling';
import { inGoodStanding, type StandingRow, standingInWords } from './subnet-standing';

export const SUBNET_STANDING = 'subnet-standing';
export const SubnetStandingReason = {
  /** Settlement never reported the provider in the subnet. */
  NotAMember: 'NotAMember',
  BelowMinimumStake: 'BelowMinimumStake',
  Jailed: 'Jailed',
  Unbonding: 'Unbonding',
  Released: 'Released',
} as const;

const REASON_OF = {
  'below-minimum-stake': SubnetStandingReason.BelowMinimumStake,
  jailed: SubnetStandingReason.Jailed,
  unbonding: SubnetStandingReason.Unbonding,
  released: SubnetStandingReason.Released,
  // A good row never rejects; listed so that the table covers every standing.
  good: SubnetStandingReason.NotAMember,
} as const;

/** The standing the filter judges by: the job's subnet, its members' rows and the round's time. */
export interface SubnetStandingView {
  readonly subnetId: string;
  /** By provider id: each candidate's row in the job's subnet (absent: not a member). */
  readonly standings: ReadonlyMap<string, StandingRow>;
  readonly atMs: number;
}

/**
 * A job funded in a subnet is offered only providers in good standing in it, as settlement last
 * reported (`subnet.member-standing-changed`). Not now rather than never: a provider joins, tops up
 * its stake or serves its jail, and the standing event that says so wakes the job.
 */
export const subnetStandingFilter = (view: SubnetStandingView): FilterPlugin => ({
  name: SUBNET_STANDING,
  hostFilter: () => {
    const statuses = new Map<string, Status>();
    return (_host, provider) => {
      const row = view.standings.get(provider.id);
      if (inGoodStanding(row, view.atMs)) return SUCCESS;
      const words = standingInWords(row);
      let st = statuses.get(words);
      if (st === undefined) {
        st = unschedulable(
          SUBNET_STANDING,
          row === undefined ? SubnetStandingReason.NotAMember : REASON_OF[row.standing],
          `not a member of subnet '${view.subnetId}' in good standing (${words})`,
        );
        statuses.set(words, st);
      }
      return st;
    };
  },
  describe: () => `in good standing in subnet '${view.subnetId}'`,
  // Its reasons say which standing stood in the way, so a waiting job's sentence quotes one.
  namesFigures: true,
});
