import { describe, expect, it } from 'vitest';
import { reconcile } from '../src/domain/reconciliation';

const AT = '2030-01-01T00:00:00.000Z';
const totals = (posted: bigint, pending: bigint, custodyOnLedger: bigint) => ({
  asset: 'NTX',
  posted,
  pending,
  custodyOnLedger,
});

describe('reconciliation: differences are reported, never corrected', () => {
  const cases: {
    name: string;
    posted: bigint;
    pending: bigint;
    custody: bigint | null;
    expected: { kind: string; ledger: string; custody: string; difference: string }[];
  }[] = [
    { name: 'balanced, custody agrees: nothing', posted: 0n, pending: 0n, custody: 1_000n, expected: [] },
    {
      name: 'posted balances not summing to zero: ledger-unbalanced',
      posted: 5n,
      pending: 0n,
      custody: 1_000n,
      expected: [{ kind: 'ledger-unbalanced', ledger: '5', custody: '0', difference: '5' }],
    },
    {
      name: 'pending balances not summing to zero: ledger-unbalanced',
      posted: 0n,
      pending: -3n,
      custody: 1_000n,
      expected: [{ kind: 'ledger-unbalanced', ledger: '-3', custody: '0', difference: '-3' }],
    },
    {
      name: 'custody behind the ledger: custody-mismatch, with both sides and the difference',
      posted: 0n,
      pending: 0n,
      custody: 993n,
      expected: [{ kind: 'custody-mismatch', ledger: '1000', custody: '993', difference: '-7' }],
    },
    {
      name: 'custody the adapter cannot say: not compared',
      posted: 0n,
      pending: 0n,
      custody: null,
      expected: [],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const events = reconcile(totals(c.posted, c.pending, 1_000n), c.custody, 'simulated', AT);
      expect(events.map((e) => e.type)).toEqual(c.expected.map(() => 'ledger.reconciliation-mismatched'));
      expect(events.map((e) => e.data)).toEqual(
        c.expected.map((x) => ({ ...x, asset: 'NTX', chain: 'simulated', checkedAt: AT })),
      );
    });
});
