import { describe, expect, it } from 'vitest';
import { expectedSlash } from '../src';

describe('expectedSlash (ADR 0071: bps of own + delegated, pro rata, floors, remainder on the provider)', () => {
  it.each([
    {
      name: 'own stake alone',
      bps: 1_000,
      own: 1_005n,
      delegations: [],
      amount: 100n,
      shares: [{ stakerId: 'p', role: 'provider', amount: '100' }],
    },
    {
      name: 'one delegation: the floors leave one unit, which the provider bears',
      bps: 1_234,
      own: 2_000_000n,
      delegations: [{ delegatorId: 'd', amount: 1_000_003n }],
      amount: 370_200n,
      shares: [
        { stakerId: 'p', role: 'provider', amount: '246800' },
        { stakerId: 'd', role: 'delegator', amount: '123400' },
      ],
    },
    {
      name: 'two delegators: the floors leave two units, both on the provider',
      bps: 8_000,
      own: 1n,
      delegations: [
        { delegatorId: 'd1', amount: 2n },
        { delegatorId: 'd2', amount: 2n },
      ],
      amount: 4n,
      shares: [
        { stakerId: 'p', role: 'provider', amount: '2' },
        { stakerId: 'd1', role: 'delegator', amount: '1' },
        { stakerId: 'd2', role: 'delegator', amount: '1' },
      ],
    },
    {
      name: 'a slash too small to reach the delegators falls on the provider',
      bps: 1,
      own: 5_000n,
      delegations: [{ delegatorId: 'd', amount: 5_000n }],
      amount: 1n,
      shares: [
        { stakerId: 'p', role: 'provider', amount: '1' },
        { stakerId: 'd', role: 'delegator', amount: '0' },
      ],
    },
    {
      name: 'nothing staked',
      bps: 5_000,
      own: 0n,
      delegations: [],
      amount: 0n,
      shares: [{ stakerId: 'p', role: 'provider', amount: '0' }],
    },
  ])('$name', ({ bps, own, delegations, amount, shares }) => {
    const slash = expectedSlash(bps, 'p', own, delegations);
    expect(slash.amount).toBe(amount);
    expect(slash.shares).toEqual(shares);
    expect(slash.shares.reduce((s, x) => s + BigInt(x.amount), 0n)).toBe(amount);
  });
});
