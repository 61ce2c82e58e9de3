import {
  type Decider,
  type DomainEvent,
  type PayloadOf,
  type WithdrawalCompleted,
  type WithdrawalFailed,
  type WithdrawalHeld,
  type WithdrawalRejected,
  type WithdrawalRequested,
} from '@gpunet/contracts';
import { accountId, chainClearingOf } from '../accounts';
import type { Transfer } from '../ledger/transfer';
import { minor, toWire } from '../money';

/*
 * A withdrawal (stream `withdrawal-<id>`): the amount is held — a pending transfer from the owner's
 * account to the chain clearing account — while the chain adapter sends it; the chain's
 * confirmation posts the hold, a failure voids it and the funds are available again.
 */

export type WithdrawalEvent =
  | DomainEvent<'withdrawal.held', PayloadOf<typeof WithdrawalHeld>>
  | DomainEvent<'withdrawal.rejected', PayloadOf<typeof WithdrawalRejected>>
  | DomainEvent<'withdrawal.completed', PayloadOf<typeof WithdrawalCompleted>>
  | DomainEvent<'withdrawal.failed', PayloadOf<typeof WithdrawalFailed>>;

export type WithdrawalCommand =
  | {
      readonly type: 'RequestWithdrawal';
      readonly request: PayloadOf<typeof WithdrawalRequested>;
      /** The source account's available balance (read under lock). */
      readonly available: bigint;
      readonly at: string;
    }
  | { readonly type: 'CompleteWithdrawal'; readonly chainTxId: string; readonly at: string }
  | { readonly type: 'FailWithdrawal'; readonly reason: string; readonly at: string };

export type WithdrawalState =
  | { readonly status: 'none' }
  | {
      readonly status: 'held' | 'rejected' | 'completed' | 'failed';
      readonly request: PayloadOf<typeof WithdrawalHeld>;
    };

/** The account a withdrawal draws from. */
export const withdrawalSourceOf = (
  r: Pick<PayloadOf<typeof WithdrawalRequested>, 'asset' | 'source' | 'ownerId'>,
) => accountId(r.asset, r.source, r.ownerId);

const fields = (r: PayloadOf<typeof WithdrawalHeld>) => ({
  withdrawalId: r.withdrawalId,
  ownerId: r.ownerId,
  source: r.source,
  asset: r.asset,
  amount: r.amount,
});

const decide = (command: WithdrawalCommand, state: WithdrawalState): WithdrawalEvent[] => {
  switch (command.type) {
    case 'RequestWithdrawal': {
      if (state.status !== 'none') return [];
      const r = command.request;
      const amount = minor(r.amount);
      const base = {
        withdrawalId: r.withdrawalId,
        ownerId: r.ownerId,
        source: r.source,
        asset: r.asset,
        amount: r.amount,
      };
      if (amount <= 0n || command.available < amount)
        return [
          {
            type: 'withdrawal.rejected',
            data: {
              ...base,
              available: toWire(command.available < 0n ? 0n : command.available),
              rejectedAt: command.at,
            },
          },
        ];
      return [{ type: 'withdrawal.held', data: { ...base, destination: r.destination, heldAt: command.at } }];
    }
    case 'CompleteWithdrawal':
      return state.status === 'held'
        ? [
            {
              type: 'withdrawal.completed',
              data: { ...fields(state.request), chainTxId: command.chainTxId, completedAt: command.at },
            },
          ]
        : [];
    case 'FailWithdrawal':
      return state.status === 'held'
        ? [
            {
              type: 'withdrawal.failed',
              data: { ...fields(state.request), reason: command.reason, failedAt: command.at },
            },
          ]
        : [];
    default: {
      const unreachable: never = command;
      return unreachable;
    }
  }
};

const evolve = (state: WithdrawalState, event: WithdrawalEvent): WithdrawalState => {
  switch (event.type) {
    case 'withdrawal.held':
      return { status: 'held', request: event.data };
    case 'withdrawal.rejected':
      return {
        status: 'rejected',
        request: { ...event.data, destination: '', heldAt: event.data.rejectedAt },
      };
    case 'withdrawal.completed':
      return state.status === 'none' ? state : { ...state, status: 'completed' };
    case 'withdrawal.failed':
      return state.status === 'none' ? state : { ...state, status: 'failed' };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};

export const withdrawalDecider: Decider<WithdrawalCommand, WithdrawalEvent, WithdrawalState> = {
  initialState: { status: 'none' },
  decide,
  evolve,
};

export const withdrawalTransfers = (_state: WithdrawalState, event: WithdrawalEvent): Transfer[] => {
  const holdId = `withdrawal:${event.data.withdrawalId}`;
  const common = {
    debitAccountId: withdrawalSourceOf(event.data),
    creditAccountId: chainClearingOf(event.data.asset),
    amount: minor(event.data.amount),
    code: 'withdrawal' as const,
    jobId: null,
  };
  switch (event.type) {
    case 'withdrawal.held':
      return [{ ...common, id: holdId, kind: 'pending', pendingId: null, at: event.data.heldAt }];
    case 'withdrawal.completed':
      return [
        {
          ...common,
          id: `post:${holdId}`,
          kind: 'post-pending',
          pendingId: holdId,
          at: event.data.completedAt,
        },
      ];
    case 'withdrawal.failed':
      return [
        { ...common, id: `void:${holdId}`, kind: 'void-pending', pendingId: holdId, at: event.data.failedAt },
      ];
    case 'withdrawal.rejected':
      return [];
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
};
