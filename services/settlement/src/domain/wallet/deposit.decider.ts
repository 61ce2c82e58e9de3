import { type Decider, type DepositConfirmed, type DomainEvent, type PayloadOf } from '@gpunet/contracts';
import { chainClearingOf, walletOf } from '../accounts';
import type { Transfer } from '../ledger/transfer';
import { minor } from '../money';

/*
 * A deposit (stream `deposit-<asset>-<depositId>`): once the chain adapter reports it confirmed, it
 * is credited to the owner's wallet from the chain clearing account, exactly once.
 */

export type DepositEvent = DomainEvent<'deposit.confirmed', PayloadOf<typeof DepositConfirmed>>;

export interface RecordDeposit {
  readonly type: 'RecordDeposit';
  readonly deposit: PayloadOf<typeof DepositConfirmed>;
}

export interface DepositState {
  readonly recorded: boolean;
}

export const depositDecider: Decider<RecordDeposit, DepositEvent, DepositState> = {
  initialState: { recorded: false },
  decide: (command, state) =>
    state.recorded || minor(command.deposit.amount) <= 0n
      ? []
      : [{ type: 'deposit.confirmed', data: command.deposit }],
  evolve: () => ({ recorded: true }),
};

export const depositTransfers = (_state: DepositState, event: DepositEvent): Transfer[] => [
  {
    id: `deposit:${event.data.asset}:${event.data.depositId}`,
    debitAccountId: chainClearingOf(event.data.asset),
    creditAccountId: walletOf(event.data.asset, event.data.ownerId),
    amount: minor(event.data.amount),
    kind: 'posted',
    pendingId: null,
    code: 'deposit',
    jobId: null,
    at: event.data.confirmedAt,
  },
];
