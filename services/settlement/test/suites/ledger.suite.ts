import { beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/domain/ledger/ledger';
import { type LedgerErrorCode, LedgerError } from '../../src/domain/ledger/ledger.errors';
import { ledgerHash } from '../../src/domain/ledger/ledger-hash';
import type { AccountBalances, Transfer, TransferResult } from '../../src/domain/ledger/transfer';

/** A ledger implementation under test: the pure one, or Postgres's. */
export interface LedgerUnderTest {
  apply(transfers: readonly Transfer[]): Promise<TransferResult[]>;
  balances(accountId: string): Promise<AccountBalances>;
  hash(): Promise<string>;
}

const AT = '2030-01-01T00:00:00.000Z';
let n = 0;
const t = (
  debitAccountId: string,
  creditAccountId: string,
  amount: bigint,
  extra: Partial<Transfer> = {},
): Transfer => ({
  id: extra.id ?? `t${++n}`,
  debitAccountId,
  creditAccountId,
  amount,
  kind: 'posted',
  pendingId: null,
  code: 'deposit',
  jobId: null,
  at: AT,
  ...extra,
});

const CHAIN = 'NTX:chain:custody';
const ALICE = 'NTX:wallet:alice';
const BOB = 'NTX:wallet:bob';
const ESCROW = 'NTX:escrow:job-1';
const PAYABLE = 'NTX:payable:p1';

const balances = (dp: bigint, dpo: bigint, cp: bigint, cpo: bigint): AccountBalances => ({
  debitsPending: dp,
  debitsPosted: dpo,
  creditsPending: cp,
  creditsPosted: cpo,
});

/** A batch that must be refused with `code`, leaving the ledger as it was. */
interface RefusalCase {
  readonly name: string;
  readonly before: () => Transfer[];
  readonly batch: () => Transfer[];
  readonly code: LedgerErrorCode;
}

const refusals: RefusalCase[] = [
  {
    name: 'an overdraft, and the earlier transfers of the same batch with it',
    before: () => [t(CHAIN, ALICE, 100n)],
    batch: () => [t(ALICE, BOB, 60n), t(ALICE, BOB, 60n)],
    code: 'EXCEEDS_CREDITS',
  },
  {
    name: 'spending what a pending transfer holds',
    before: () => [t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })],
    batch: () => [t(ALICE, BOB, 30n)],
    code: 'EXCEEDS_CREDITS',
  },
  {
    name: 'credits beyond debits on a debit-normal account',
    before: () => [],
    batch: () => [t(CHAIN, 'NTX:chain:other', 1n, { code: 'withdrawal' })],
    code: 'EXCEEDS_DEBITS',
  },
  {
    name: 'the same id with another amount',
    before: () => [t(CHAIN, ALICE, 100n, { id: 'dep-1' })],
    batch: () => [t(CHAIN, ALICE, 101n, { id: 'dep-1' })],
    code: 'EXISTS_WITH_DIFFERENT_FIELDS',
  },
  {
    name: 'posting more than is pending',
    before: () => [t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })],
    batch: () => [t(ALICE, ESCROW, 81n, { kind: 'post-pending', pendingId: 'hold' })],
    code: 'EXCEEDS_PENDING_AMOUNT',
  },
  {
    name: 'voiding less than is pending',
    before: () => [t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })],
    batch: () => [t(ALICE, ESCROW, 79n, { kind: 'void-pending', pendingId: 'hold' })],
    code: 'EXCEEDS_PENDING_AMOUNT',
  },
  {
    name: 'resolving a pending transfer twice',
    before: () => [
      t(CHAIN, ALICE, 100n),
      t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' }),
      t(ALICE, ESCROW, 50n, { kind: 'post-pending', pendingId: 'hold', id: 'post-hold' }),
    ],
    batch: () => [t(ALICE, ESCROW, 80n, { kind: 'void-pending', pendingId: 'hold', id: 'void-hold' })],
    code: 'PENDING_TRANSFER_ALREADY_RESOLVED',
  },
  {
    name: 'resolving twice within one batch',
    before: () => [t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })],
    batch: () => [
      t(ALICE, ESCROW, 10n, { kind: 'post-pending', pendingId: 'hold', id: 'a' }),
      t(ALICE, ESCROW, 20n, { kind: 'post-pending', pendingId: 'hold', id: 'b' }),
    ],
    code: 'PENDING_TRANSFER_ALREADY_RESOLVED',
  },
  {
    name: 'posting a transfer that is not pending',
    before: () => [t(CHAIN, ALICE, 100n, { id: 'plain' })],
    batch: () => [t(CHAIN, ALICE, 10n, { kind: 'post-pending', pendingId: 'plain' })],
    code: 'PENDING_TRANSFER_NOT_PENDING',
  },
  {
    name: 'posting an unknown pending transfer',
    before: () => [],
    batch: () => [t(CHAIN, ALICE, 10n, { kind: 'post-pending', pendingId: 'nope' })],
    code: 'PENDING_TRANSFER_NOT_FOUND',
  },
  {
    name: 'posting a pending transfer to other accounts',
    before: () => [t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })],
    batch: () => [t(ALICE, PAYABLE, 10n, { kind: 'post-pending', pendingId: 'hold' })],
    code: 'PENDING_TRANSFER_HAS_DIFFERENT_ACCOUNTS',
  },
  {
    name: 'a transfer across assets',
    before: () => [t(CHAIN, ALICE, 100n)],
    batch: () => [t(ALICE, 'GPU:wallet:bob', 10n)],
    code: 'ASSET_MISMATCH',
  },
  {
    name: 'an account id that names no purpose',
    before: () => [],
    batch: () => [t(CHAIN, 'NTX:savings:alice', 10n)],
    code: 'INVALID_ACCOUNT_ID',
  },
  {
    name: 'a zero amount',
    before: () => [],
    batch: () => [t(CHAIN, ALICE, 0n)],
    code: 'INVALID_AMOUNT',
  },
  {
    name: 'one account on both sides',
    before: () => [t(CHAIN, ALICE, 100n)],
    batch: () => [t(ALICE, ALICE, 1n)],
    code: 'ACCOUNTS_MUST_BE_DIFFERENT',
  },
];

/**
 * The ledger port's contract: every implementation accepts and refuses the same batches with the
 * same codes, leaves nothing behind when it refuses, and fingerprints identically.
 */
export const ledgerContract = (label: string, open: () => Promise<LedgerUnderTest>): void => {
  describe(`ledger contract: ${label}`, () => {
    let ledger: LedgerUnderTest;
    beforeEach(async () => {
      ledger = await open();
    });

    it('posts, and answers exists to the same transfer again', async () => {
      expect(await ledger.apply([t(CHAIN, ALICE, 100n, { id: 'dep-1' })])).toEqual(['created']);
      expect(
        await ledger.apply([t(CHAIN, ALICE, 100n, { id: 'dep-1' }), t(ALICE, BOB, 40n, { id: 'x' })]),
      ).toEqual(['exists', 'created']);
      expect(await ledger.balances(ALICE)).toEqual(balances(0n, 40n, 0n, 100n));
      expect(await ledger.balances(CHAIN)).toEqual(balances(0n, 100n, 0n, 0n));
    });

    it('posts part of a pending transfer and releases the rest', async () => {
      await ledger.apply([t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })]);
      expect(await ledger.balances(ALICE)).toEqual(balances(80n, 0n, 0n, 100n));
      await ledger.apply([
        t(ALICE, ESCROW, 50n, { kind: 'post-pending', pendingId: 'hold', id: 'post-hold' }),
      ]);
      expect(await ledger.balances(ALICE)).toEqual(balances(0n, 50n, 0n, 100n));
      expect(await ledger.balances(ESCROW)).toEqual(balances(0n, 0n, 0n, 50n));
      // The retry of the post is idempotent even though the hold is resolved now.
      expect(
        await ledger.apply([
          t(ALICE, ESCROW, 50n, { kind: 'post-pending', pendingId: 'hold', id: 'post-hold' }),
        ]),
      ).toEqual(['exists']);
    });

    it('voids a pending transfer', async () => {
      await ledger.apply([t(CHAIN, ALICE, 100n), t(ALICE, ESCROW, 80n, { kind: 'pending', id: 'hold' })]);
      await ledger.apply([t(ALICE, ESCROW, 80n, { kind: 'void-pending', pendingId: 'hold' })]);
      expect(await ledger.balances(ALICE)).toEqual(balances(0n, 0n, 0n, 100n));
      expect(await ledger.balances(ESCROW)).toEqual(balances(0n, 0n, 0n, 0n));
    });

    for (const c of refusals) {
      it(`refuses ${c.name}: ${c.code}`, async () => {
        const before = c.before();
        if (before.length > 0) await ledger.apply(before);
        const hash = await ledger.hash();
        const error = await ledger.apply(c.batch()).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LedgerError);
        expect((error as LedgerError).code).toBe(c.code);
        expect(await ledger.hash()).toBe(hash);
      });
    }

    it('fingerprints like the pure ledger', async () => {
      const history = [
        [
          t(CHAIN, ALICE, 1_000n, { id: 'h1' }),
          t(ALICE, ESCROW, 600n, { id: 'h2', code: 'escrow-fund', jobId: 'job-1' }),
        ],
        [t(ESCROW, PAYABLE, 250n, { id: 'h3', kind: 'pending', code: 'usage-charge', jobId: 'job-1' })],
        [
          t(ESCROW, PAYABLE, 200n, {
            id: 'h4',
            kind: 'post-pending',
            pendingId: 'h3',
            code: 'usage-charge',
            jobId: 'job-1',
          }),
        ],
        [t(ESCROW, ALICE, 400n, { id: 'h5', code: 'refund', jobId: 'job-1' })],
      ];
      const reference = Ledger.empty();
      for (const batch of history) {
        reference.apply(batch);
        await ledger.apply(batch);
      }
      expect(await ledger.hash()).toBe(ledgerHash(reference.accounts(), reference.transfers()));
    });
  });
};
