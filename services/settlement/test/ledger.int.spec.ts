import { type PostgresTestSchema, usePostgres } from '@gpunet/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ledgerSchemaSql } from '../src/infra/migrations/0001-ledger.migration';
import { PostgresLedger } from '../src/infra/postgres-ledger';
import { ledgerContract } from './suites/ledger.suite';

/*
 * The Postgres ledger against the same contract as the pure one, and the rules the database holds
 * even against SQL that bypasses ledger_apply.
 */

const schemas: PostgresTestSchema[] = [];
afterAll(async () => {
  for (const s of schemas) await s.drop();
});

const openLedger = async (): Promise<{ pg: PostgresTestSchema; ledger: PostgresLedger }> => {
  const pg = await usePostgres({ label: 'ledger' });
  schemas.push(pg);
  for (const sql of ledgerSchemaSql(pg.schema)) await pg.pool.query(sql);
  return { pg, ledger: new PostgresLedger(pg.schema) };
};

const sqlOf = (pg: PostgresTestSchema) => ({
  query: async <R>(text: string, params: readonly unknown[] = []) =>
    (await pg.pool.query(text, [...params])).rows as R[],
});

ledgerContract('postgres', async () => {
  const { pg, ledger } = await openLedger();
  const sql = sqlOf(pg);
  return {
    apply: (transfers) => ledger.apply(sql, transfers),
    balances: async (id) => (await ledger.lockAccounts(sql, [id])).get(id)!,
    hash: () => ledger.hash(sql),
  };
});

describe('the database holds the ledger rules against any SQL', () => {
  const at = '2030-01-01T00:00:00Z';
  const seeded = async () => {
    const { pg, ledger } = await openLedger();
    await ledger.apply(sqlOf(pg), [
      {
        id: 'd1',
        debitAccountId: 'NTX:chain:custody',
        creditAccountId: 'NTX:wallet:a',
        amount: 100n,
        kind: 'posted',
        pendingId: null,
        code: 'deposit',
        jobId: null,
        at,
      },
    ]);
    return pg;
  };
  const sqlstate = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: { code?: string; constraint?: string }) => e.constraint ?? e.code,
    );

  it('refuses to change or delete a transfer', async () => {
    const pg = await seeded();
    expect(await sqlstate(pg.pool.query(`UPDATE ledger_transfers SET amount = 1`))).toBe('GL100');
    expect(await sqlstate(pg.pool.query(`DELETE FROM ledger_transfers`))).toBe('GL100');
    expect(await sqlstate(pg.pool.query(`TRUNCATE ledger_transfers CASCADE`))).toBe('GL100');
  });

  it('refuses balance changes outside ledger_apply', async () => {
    const pg = await seeded();
    expect(
      await sqlstate(pg.pool.query(`UPDATE ledger_accounts SET credits_posted = credits_posted + 1`)),
    ).toBe('GL101');
  });

  it('refuses an overdraft even when the guard is bypassed', async () => {
    const pg = await seeded();
    const client = await pg.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT set_config('gpunet.ledger_apply', 'on', true)`);
      expect(
        await sqlstate(
          client.query(`UPDATE ledger_accounts SET debits_pending = 101 WHERE id = 'NTX:wallet:a'`),
        ),
      ).toBe('ledger_accounts_debits_within_credits');
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      await client.query(`SELECT set_config('gpunet.ledger_apply', 'on', true)`);
      expect(
        await sqlstate(
          client.query(`UPDATE ledger_accounts SET debits_pending = -1 WHERE id = 'NTX:wallet:a'`),
        ),
      ).toBe('ledger_accounts_non_negative');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('refuses a transfer inserted directly whose accounts are in another asset', async () => {
    const pg = await seeded();
    await pg.pool
      .query(`INSERT INTO ledger_accounts (id, asset, purpose, owner, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
                         VALUES ('GPU:wallet:b', 'GPU', 'wallet', 'b', true, false)`);
    expect(
      await sqlstate(
        pg.pool
          .query(`INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, asset, amount, kind, code, at)
                       VALUES ('x', 'NTX:wallet:a', 'GPU:wallet:b', 'NTX', 1, 'posted', 'deposit', now())`),
      ),
    ).toBe('ledger_transfers_credit_account_id_asset_fkey');
  });

  it('refuses an account whose rule does not match its purpose', async () => {
    const pg = await seeded();
    expect(
      await sqlstate(
        pg.pool
          .query(`INSERT INTO ledger_accounts (id, asset, purpose, owner, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
                       VALUES ('NTX:wallet:c', 'NTX', 'wallet', 'c', false, false)`),
      ),
    ).toBe('ledger_accounts_rule_by_purpose');
  });
});
