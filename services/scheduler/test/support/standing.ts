import { type MemberStanding, originOf, streamIdOf, SubnetMemberStandingChanged } from '@gpunet/contracts';
import type { EventingRuntime } from '@gpunet/eventing';
import { type NatsTestContext, type PostgresTestSchema, waitFor } from '@gpunet/testing';
import type { StandingsOf } from '../../src/app/placement.engine';
import type { StandingRow } from '../../src/domain/subnet-standing';

/** A standing row as settlement's event would make it (for the engine's in-memory standings). */
export const standingRow = (
  subnetId: string,
  providerId: string,
  standing: MemberStanding = 'good',
  over: Partial<StandingRow> = {},
): StandingRow => ({
  subnetId,
  providerId,
  standing,
  stake: '1000',
  minStake: '1000',
  jailedUntilMs: null,
  changedAtMs: 0,
  seq: 1,
  ...over,
});

/**
 * The engine's standings port over rows kept in memory (`rows`: subnet → provider → row); a
 * provider without a row is not a member. `everyoneGood` instead answers every provider asked as a
 * member in good standing: for tests about something else.
 */
export const memoryStandings = (
  rows: Map<string, Map<string, StandingRow>> = new Map(),
): StandingsOf & { set(row: StandingRow): void } =>
  Object.assign(
    (subnetId: string, providerIds: readonly string[]) => {
      const inSubnet = rows.get(subnetId) ?? new Map<string, StandingRow>();
      return Promise.resolve(
        new Map(providerIds.flatMap((id) => (inSubnet.has(id) ? [[id, inSubnet.get(id)!] as const] : []))),
      );
    },
    {
      set: (row: StandingRow) => {
        const inSubnet = rows.get(row.subnetId) ?? new Map<string, StandingRow>();
        inSubnet.set(row.providerId, row);
        rows.set(row.subnetId, inSubnet);
      },
    },
  );

export const everyoneGood: StandingsOf = (subnetId, providerIds) =>
  Promise.resolve(new Map(providerIds.map((id) => [id, standingRow(subnetId, id)])));

export interface StandingOptions {
  readonly standing?: MemberStanding;
  readonly jailedUntil?: string | null;
  readonly stake?: string;
  readonly minStake?: string;
  /** `changedAt`; default the epoch of the tests' clocks. */
  readonly at?: string;
}

/**
 * Settlement's `subnet.member-standing-changed` for each provider in `subnetId`, published on
 * JetStream as settlement's outbox would; resolves once the scheduler's projection holds every one
 * of them (its row at the event's stream sequence or later).
 */
export const publishStanding = async (
  ctx: {
    readonly eventing: EventingRuntime;
    readonly nats: NatsTestContext;
    readonly pg: PostgresTestSchema;
  },
  subnetId: string,
  providerIds: readonly string[],
  options: StandingOptions = {},
): Promise<void> => {
  const { eventing, nats, pg } = ctx;
  const standing = options.standing ?? 'good';
  for (const providerId of providerIds) {
    const streamId = streamIdOf('subnet', subnetId);
    const envelope = eventing.envelopes.message(
      SubnetMemberStandingChanged,
      {
        subnetId,
        providerId,
        standing,
        stake: options.stake ?? '1000',
        minStake: options.minStake ?? '1000',
        jailedUntil: options.jailedUntil ?? null,
        changedAt: options.at ?? '2030-01-01T00:00:00.000Z',
      },
      streamId,
      originOf(`test:${streamId}:${providerId}`),
    );
    const ack = await eventing.nats.js.publish(
      SubnetMemberStandingChanged.subject(undefined, nats.prefix),
      JSON.stringify(envelope),
      { msgID: envelope.eventId },
    );
    await waitFor(
      async () =>
        (
          await pg.pool.query(
            `SELECT 1 FROM "${pg.schema}".subnet_standing
             WHERE subnet_id = $1 AND provider_id = $2 AND seq >= $3`,
            [subnetId, providerId, ack.seq],
          )
        ).rows.length === 1,
      { timeoutMs: 10_000, description: `${providerId} ${standing} in subnet ${subnetId}` },
    );
  }
};
