import { foldEvents } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../src/domain/ledger/ledger';
import { depositDecider, depositTransfers } from '../src/domain/wallet/deposit.decider';
import {
  withdrawalDecider,
  type WithdrawalCommand,
  type WithdrawalEvent,
  withdrawalTransfers,
} from '../src/domain/wallet/withdrawal.decider';

const AT = '2030-01-01T00:00:00.000Z';
const LATER = '2030-01-01T00:05:00.000Z';

const DEPOSIT = {
  depositId: 'd1',
  asset: 'NTX',
  ownerId: 'o1',
  amount: '1000',
  chain: 'simulated',
  chainTxId: 'tx1',
  confirmations: 15,
  confirmedAt: AT,
};

describe('deposit: credited once, from the chain clearing account', () => {
  it('records a confirmed deposit once, as deposit:<asset>:<id> from chain:custody to the wallet (posted)', () => {
    const [event, ...rest] = depositDecider.decide(
      { type: 'RecordDeposit', deposit: DEPOSIT },
      depositDecider.initialState,
    );
    expect(rest).toEqual([]);
    expect(event).toEqual({ type: 'deposit.confirmed', data: DEPOSIT });
    expect(
      depositTransfers(depositDecider.initialState, event!).map((t) => [
        t.id,
        t.kind,
        t.debitAccountId,
        t.creditAccountId,
        t.amount,
      ]),
    ).toEqual([['deposit:NTX:d1', 'posted', 'NTX:chain:custody', 'NTX:wallet:o1', 1_000n]]);
    given(depositDecider, [event!]).when({ type: 'RecordDeposit', deposit: DEPOSIT }).then([]);
  });
});

const request = (amount = '400', available = 1_000n): WithdrawalCommand => ({
  type: 'RequestWithdrawal',
  request: {
    withdrawalId: 'w1',
    ownerId: 'o1',
    source: 'wallet',
    asset: 'NTX',
    amount,
    destination: 'addr_test1',
    requestedAt: AT,
  },
  available,
  at: AT,
});

const HELD: WithdrawalEvent = {
  type: 'withdrawal.held',
  data: {
    withdrawalId: 'w1',
    ownerId: 'o1',
    source: 'wallet',
    asset: 'NTX',
    amount: '400',
    destination: 'addr_test1',
    heldAt: AT,
  },
};

/** The wallet's available balance after 1 000 deposited and these withdrawal events. */
const availableAfter = (events: readonly WithdrawalEvent[]): bigint => {
  const ledger = Ledger.empty();
  ledger.apply(depositTransfers(depositDecider.initialState, { type: 'deposit.confirmed', data: DEPOSIT }));
  let state = withdrawalDecider.initialState;
  for (const e of events) {
    ledger.apply(withdrawalTransfers(state, e));
    state = withdrawalDecider.evolve(state, e);
  }
  const w = ledger.account('NTX:wallet:o1')!;
  return w.creditsPosted - w.debitsPosted - w.debitsPending;
};

describe('withdrawal: held, then posted on confirmation or voided on failure', () => {
  it('holds what is available as a pending transfer withdrawal:<id> to chain:custody', () => {
    given(withdrawalDecider, []).when(request()).then([HELD]);
    expect(withdrawalTransfers(withdrawalDecider.initialState, HELD)).toMatchObject([
      {
        id: 'withdrawal:w1',
        kind: 'pending',
        debitAccountId: 'NTX:wallet:o1',
        creditAccountId: 'NTX:chain:custody',
        amount: 400n,
      },
    ]);
    expect(availableAfter([HELD])).toBe(600n);
  });

  it('rejects more than is available, moving nothing', () => {
    const [event] = withdrawalDecider.decide(request('1001'), withdrawalDecider.initialState);
    expect(event).toMatchObject({ type: 'withdrawal.rejected', data: { amount: '1001', available: '1000' } });
    expect(withdrawalTransfers(withdrawalDecider.initialState, event!)).toEqual([]);
  });

  it('posts the hold when the chain confirms; the funds are gone', () => {
    const [event] = withdrawalDecider.decide(
      { type: 'CompleteWithdrawal', chainTxId: 'tx9', at: LATER },
      foldEvents(withdrawalDecider, [HELD]),
    );
    expect(event).toMatchObject({ type: 'withdrawal.completed', data: { chainTxId: 'tx9' } });
    expect(withdrawalTransfers(foldEvents(withdrawalDecider, [HELD]), event!)).toMatchObject([
      { id: 'post:withdrawal:w1', kind: 'post-pending', pendingId: 'withdrawal:w1', amount: 400n },
    ]);
    expect(availableAfter([HELD, event!])).toBe(600n);
  });

  it('voids the hold when the chain fails it; the funds are available again', () => {
    const [event] = withdrawalDecider.decide(
      { type: 'FailWithdrawal', reason: 'refused', at: LATER },
      foldEvents(withdrawalDecider, [HELD]),
    );
    expect(event).toMatchObject({ type: 'withdrawal.failed', data: { reason: 'refused' } });
    expect(withdrawalTransfers(foldEvents(withdrawalDecider, [HELD]), event!)).toMatchObject([
      { id: 'void:withdrawal:w1', kind: 'void-pending', pendingId: 'withdrawal:w1', amount: 400n },
    ]);
    expect(availableAfter([HELD, event!])).toBe(1_000n);
  });
});
