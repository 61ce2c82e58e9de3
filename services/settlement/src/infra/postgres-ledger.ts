import { assertSchemaName } from '@gpunet/eventing';
import { accountSpec } from '../domain/accounts';
import type { Account, RecordedTransfer } from '../domain/ledger/ledger';
import { LedgerError, type LedgerErrorCode } from '../domain/ledger/ledger.errors';
import { ledgerHash } from '../domain/ledger/ledger-hash';
import {
  type AccountBalances,
  type Transfer,
  type TransferCode,
  type TransferKind,
  type TransferResult,
  ZERO_BALANCES,
} from '../domain/ledger/transfer';
import type { AssetTotals } from '../domain/reconciliation';

/** Anything that runs SQL: a transaction (`Tx`), a pool, a client. */
export interface Sql {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

interface AccountRow {
  id: string;
  debits_pending: string;
  debits_posted: string;
  credits_pending: string;
  credits_posted: string;
}

interface TransferRow {
  sequence: string;
  id: string;
  debit_account_id: string;
  credit_account_id: string;
  asset: string;
  amount: string;
  kind: TransferKind;
  pending_id: string | null;
  code: TransferCode;
  job_id: string | null;
  at: Date;
}

const BALANCES = `id, debits_pending::text, debits_posted::text, credits_pending::text, credits_posted::text`;

const balancesOf = (row: AccountRow): AccountBalances => ({
  debitsPending: BigInt(row.debits_pending),
  debitsPosted: BigInt(row.debits_posted),
  creditsPending: BigInt(row.credits_pending),
  creditsPosted: BigInt(row.credits_posted),
});

/** SQLSTATEs raised by `ledger_apply` and the constraints, as the pure ledger's error codes. */
const RAISED: Record<string, LedgerErrorCode> = {
  GL001: 'EXISTS_WITH_DIFFERENT_FIELDS',
  GL002: 'PENDING_TRANSFER_NOT_FOUND',
  GL003: 'PENDING_TRANSFER_NOT_PENDING',
  GL004: 'PENDING_TRANSFER_HAS_DIFFERENT_ACCOUNTS',
  GL005: 'EXCEEDS_PENDING_AMOUNT',
  GL006: 'PENDING_ID_NOT_ALLOWED',
};
const CONSTRAINTS: Record<string, LedgerErrorCode> = {
  ledger_accounts_debits_within_credits: 'EXCEEDS_CREDITS',
  ledger_accounts_credits_within_debits: 'EXCEEDS_DEBITS',
  ledger_accounts_id_format: 'INVALID_ACCOUNT_ID',
  ledger_transfers_resolve_once: 'PENDING_TRANSFER_ALREADY_RESOLVED',
  ledger_transfers_two_accounts: 'ACCOUNTS_MUST_BE_DIFFERENT',
  ledger_transfers_amount_positive: 'INVALID_AMOUNT',
  ledger_transfers_pending_id: 'PENDING_ID_MISSING',
  ledger_transfers_credit_account_id_asset_fkey: 'ASSET_MISMATCH',
  ledger_transfers_pending_id_fkey: 'PENDING_TRANSFER_NOT_FOUND',
};

interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

const pgErrorOf = (error: unknown): PgError => {
  const e = error as { driverError?: PgError } & PgError;
  return e.driverError ?? e;
};

/** The Postgres error as a `LedgerError` when it is a ledger rule, else the error itself. */
export const toLedgerError = (error: unknown): unknown => {
  const pg = pgErrorOf(error);
  const code =
    (pg.code && RAISED[pg.code]) ??
    (pg.constraint ? CONSTRAINTS[pg.constraint] : undefined) ??
    (pg.code === '23503' && pg.constraint?.includes('asset') ? 'ASSET_MISMATCH' : undefined);
  return code ? new LedgerError(code, pg.message ?? code, undefined, { cause: error }) : error;
};

/**
 * The ledger in Postgres (migration 0001): `apply` is one round trip to `ledger_apply`, which
 * enforces the same rules as the pure `Ledger` in the database (constraints, triggers, locks), and
 * raises the same error codes.
 */
export class PostgresLedger {
  readonly schema: string;

  constructor(schema: string) {
    this.schema = assertSchemaName(schema);
  }

  async apply(sql: Sql, transfers: readonly Transfer[]): Promise<TransferResult[]> {
    if (transfers.length === 0) return [];
    try {
      const [row] = await sql.query<{ results: TransferResult[] }>(
        `SELECT "${this.schema}".ledger_apply($1, $2, $3, $4::numeric[], $5, $6, $7, $8, $9::timestamptz[]) AS results`,
        [
          transfers.map((t) => t.id),
          transfers.map((t) => t.debitAccountId),
          transfers.map((t) => t.creditAccountId),
          transfers.map((t) => t.amount.toString()),
          transfers.map((t) => t.kind),
          transfers.map((t) => t.pendingId),
          transfers.map((t) => t.code),
          transfers.map((t) => t.jobId),
          transfers.map((t) => t.at),
        ],
      );
      return row!.results;
    } catch (error) {
      throw toLedgerError(error);
    }
  }

  /** Locks the accounts that exist, in id order, and returns balances (zero for the others). */
  async lockAccounts(sql: Sql, ids: readonly string[]): Promise<Map<string, AccountBalances>> {
    const rows = await sql.query<AccountRow>(
      `SELECT ${BALANCES} FROM "${this.schema}".ledger_accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE`,
      [[...new Set(ids)]],
    );
    const found = new Map(rows.map((r) => [r.id, balancesOf(r)]));
    return new Map(ids.map((id) => [id, found.get(id) ?? ZERO_BALANCES]));
  }

  async accounts(
    sql: Sql,
    where: { ids?: readonly string[]; owner?: string; asset?: string } = {},
  ): Promise<Account[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (where.ids) {
      params.push(where.ids);
      conditions.push(`id = ANY($${params.length})`);
    }
    if (where.owner) {
      params.push(where.owner);
      // Stake accounts are owned by `<participant>@<subnet>`.
      conditions.push(`(owner = $${params.length} OR starts_with(owner, $${params.length} || '@'))`);
    }
    if (where.asset) {
      params.push(where.asset);
      conditions.push(`asset = $${params.length}`);
    }
    const rows = await sql.query<AccountRow>(
      `SELECT ${BALANCES} FROM "${this.schema}".ledger_accounts
        ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY id`,
      params,
    );
    return rows.map((r) => ({ ...accountSpec(r.id), ...balancesOf(r) }));
  }

  async transfers(
    sql: Sql,
    where: { jobId?: string; accountId?: string; afterSequence?: number; limit?: number } = {},
  ): Promise<RecordedTransfer[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (where.jobId !== undefined) {
      params.push(where.jobId);
      conditions.push(`job_id = $${params.length}`);
    }
    if (where.accountId !== undefined) {
      params.push(where.accountId);
      conditions.push(`(debit_account_id = $${params.length} OR credit_account_id = $${params.length})`);
    }
    if (where.afterSequence !== undefined) {
      params.push(where.afterSequence);
      conditions.push(`ledger_transfers.sequence > $${params.length}`);
    }
    let limit = '';
    if (where.limit !== undefined) {
      params.push(where.limit);
      limit = `LIMIT $${params.length}`;
    }
    const rows = await sql.query<TransferRow>(
      `SELECT sequence::text, id, debit_account_id, credit_account_id, asset, amount::text, kind, pending_id, code, job_id, at
         FROM "${this.schema}".ledger_transfers
        ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY ledger_transfers.sequence ${limit}`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      sequence: Number(r.sequence),
      debitAccountId: r.debit_account_id,
      creditAccountId: r.credit_account_id,
      asset: r.asset,
      amount: BigInt(r.amount),
      kind: r.kind,
      pendingId: r.pending_id,
      code: r.code,
      jobId: r.job_id,
      at: r.at.toISOString(),
    }));
  }

  /** One asset summed: what reconciliation checks. */
  async totals(sql: Sql, asset: string): Promise<AssetTotals> {
    const [row] = await sql.query<{ posted: string; pending: string; custody: string }>(
      `SELECT coalesce(sum(credits_posted - debits_posted), 0)::text AS posted,
              coalesce(sum(credits_pending - debits_pending), 0)::text AS pending,
              coalesce(sum(debits_posted - credits_posted) FILTER (WHERE purpose = 'chain'), 0)::text AS custody
         FROM "${this.schema}".ledger_accounts WHERE asset = $1`,
      [asset],
    );
    return {
      asset,
      posted: BigInt(row!.posted),
      pending: BigInt(row!.pending),
      custodyOnLedger: BigInt(row!.custody),
    };
  }

  /** The same fingerprint as the pure ledger's (`ledgerHash`). */
  async hash(sql: Sql): Promise<string> {
    return ledgerHash(await this.accounts(sql), await this.transfers(sql));
  }
}
