import { type DomainEvent, originOf } from '@gpunet/contracts';
import type { Tx } from '@gpunet/eventing';
import { seededRandom } from '@gpunet/testing';
import { JobNotKnownYetError } from '../../src/domain/job/job-settlement.decider';
import type { Account, RecordedTransfer } from '../../src/domain/ledger/ledger';
import type { Input } from './scenario';
import type { SettlementUnderTest } from './service';

/** The ledger as Postgres holds it. */
export interface LedgerView {
  readonly accounts: readonly Account[];
  readonly transfers: readonly RecordedTransfer[];
}

/** Settlement's state after some deliveries, read back from Postgres. */
export interface SettlementView extends LedgerView {
  /** Every appended event in commit order: what a rebuild replays. */
  readonly log: readonly { streamId: string; event: DomainEvent }[];
  /** The events of each stream, in order. */
  readonly streams: ReadonlyMap<string, readonly DomainEvent[]>;
}

export interface Delivery {
  readonly view: SettlementView;
  /** Deliveries that had to wait for another message first (redelivered later, like a nak). */
  readonly deferred: number;
}

/** A clock the harness sets: each world starts at the same instant, and every delivery moves it on. */
export class SteppingClock {
  private ms: number;

  constructor(private readonly start: number) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  reset(): void {
    this.ms = this.start;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Longer than any unbonding period the scenarios draw. */
const RELEASE_AFTER_MS = 60_000;

class NotYet extends Error {}
/** Ends a world's transaction without keeping anything of it. */
class Discard extends Error {}

const ledgerOf = async (s: SettlementUnderTest, tx: Tx): Promise<LedgerView> => ({
  accounts: await s.ledger.accounts(tx),
  transfers: await s.ledger.transfers(tx),
});

const viewOf = async (s: SettlementUnderTest, tx: Tx): Promise<SettlementView> => {
  const log = await s.log(tx);
  const streams = new Map<string, DomainEvent[]>();
  for (const { streamId, event } of log) streams.set(streamId, [...(streams.get(streamId) ?? []), event]);
  return { ...(await ledgerOf(s, tx)), log, streams };
};

/**
 * Requests the worlds publish whether or not settlement consumes them yet: one it does not consume
 * stays on its stream, as JetStream would leave it. Any other message without a controller fails.
 */
export const OPTIONAL_REQUESTS: ReadonlySet<string> = new Set([
  'subnet.delegation-requested',
  'subnet.undelegation-requested',
]);

const apply = async (s: SettlementUnderTest, input: Input, tx: Tx): Promise<void> => {
  switch (input.kind) {
    case 'message':
      if (OPTIONAL_REQUESTS.has(input.envelope.type) && !s.consumes(input.envelope.type)) return;
      return s.handle(input.envelope, tx);
    case 'deposit':
      await s.commands.recordDeposit(input.deposit, originOf(input.deposit.chainTxId), tx);
      return;
    case 'release':
      await s.commands.stepSubnet(input.subnetId, tx);
      return;
    case 'withdrawal-result': {
      const { state } = await s.commands.resolveWithdrawal(
        input.withdrawalId,
        input.confirmed
          ? { confirmed: true, chainTxId: `tx-${input.withdrawalId}` }
          : { confirmed: false, reason: 'refused' },
        tx,
      );
      if (state.status === 'none') throw new NotYet();
      return;
    }
  }
};

/**
 * Delivers inputs to settlement at least once, the way JetStream would: in the given order, each
 * possibly several times, each in a transaction of its own (a savepoint); an input whose
 * prerequisite has not arrived yet (usage before the job, say) is put back at the end of the queue,
 * as a nak would. `afterEach` checks invariants after every delivery. The whole world runs in one
 * Postgres transaction that is rolled back at the end, so the next world starts from nothing.
 */
export const deliver = async (
  s: SettlementUnderTest,
  clock: SteppingClock,
  inputs: readonly Input[],
  options: { afterEach?: (ledger: LedgerView) => void } = {},
): Promise<Delivery> => {
  let delivery: Delivery | undefined;
  clock.reset();
  await s.eventing.db
    .transaction(async (tx) => {
      const queue = [...inputs];
      let deferred = 0;
      for (let guard = 0; queue.length > 0; guard++) {
        if (guard > inputs.length * 20) throw new Error('deliveries did not converge');
        const input = queue.shift()!;
        // A release comes with a chain pass, a while after the messages before it.
        clock.advance(input.kind === 'release' ? RELEASE_AFTER_MS : 1_000);
        await tx.query('SAVEPOINT delivery');
        try {
          await apply(s, input, tx);
          await tx.query('RELEASE SAVEPOINT delivery');
        } catch (error) {
          await tx.query('ROLLBACK TO SAVEPOINT delivery');
          if (!(error instanceof JobNotKnownYetError) && !(error instanceof NotYet)) throw error;
          deferred += 1;
          queue.push(input);
          continue;
        }
        if (options.afterEach) options.afterEach(await ledgerOf(s, tx));
      }
      delivery = { view: await viewOf(s, tx), deferred };
      throw new Discard();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Discard)) throw error;
    });
  return delivery!;
};

/** The inputs shuffled (seeded) with some delivered twice or three times. */
export const shuffledWithDuplicates = (
  inputs: readonly Input[],
  seed: number,
  duplicateRate = 0.3,
): Input[] => {
  const rng = seededRandom(seed);
  const out: Input[] = [];
  for (const input of inputs) {
    out.push(input);
    while (rng.next() < duplicateRate) out.push(input);
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};
