/**
 * One phase of `bench/settlement` (run by `bench/settlement/run.ts`, one child process per phase so
 * each has its own peak RSS). Prints one JSON line.
 *
 *   ledger    the job money flow through `ledger_apply`: balance rules, immutability, resolve-once
 *             and asset checks enforced by the database; accounts locked in id order
 *   baseline  the same transfer rows, same batches and writers, as plain INSERTs into a table with
 *             no constraint, index, trigger or balance update
 *
 * Workload per job: fund the escrow (1 transfer); accrue usage for `usage` providers, three legs
 * each, as pending transfers (3 × usage); settle — post every pending transfer, refund the rest
 * (3 × usage + 1). `writers` concurrent connections, each a job at a time, one statement per step
 * (autocommit: one statement is one transaction) — or, with `perStatement` N > 0, each step cut into
 * statements of at most N transfers (1: every transfer its own statement and transaction). Shared accounts: the platform's fees and 4
 * subnet treasuries (each striped 16 ways, as the service stripes them), 64 provider payables,
 * 32 tenant wallets.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  escrowOf,
  payableOf,
  platformFeesOf,
  treasuryOf,
  walletOf,
  chainClearingOf,
} from '../src/domain/accounts';
import type { Transfer } from '../src/domain/ledger/transfer';
import { ledgerSchemaSql } from '../src/infra/migrations/0001-ledger.migration';
import { PostgresLedger, type Sql } from '../src/infra/postgres-ledger';

const [phase = 'ledger', jobsArg = '600', writersArg = '8', usageArg = '4', perStatementArg = '0'] =
  process.argv.slice(2);
const JOBS = Number(jobsArg);
const WRITERS = Number(writersArg);
const USAGE = Number(usageArg);
/** Transfers per statement at most; 0: one statement per step of the job. */
const PER_STATEMENT = Number(perStatementArg);

/** A step's transfers in statements of at most `n` (n = 0: the step is one statement). */
const statementsOf = (step: readonly Transfer[], n: number): Transfer[][] => {
  if (n <= 0) return [[...step]];
  const out: Transfer[][] = [];
  for (let i = 0; i < step.length; i += n) out.push(step.slice(i, i + n));
  return out;
};
const URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const ASSET = 'NTX';
const AT = '2030-01-01T00:00:00.000Z';

/** The three statements of one job's life, as transfers. */
const jobSteps = (job: number): Transfer[][] => {
  const jobId = `bench-${job}`;
  const tenant = `tenant-${job % 32}`;
  const escrow = escrowOf(ASSET, jobId);
  const base = { jobId, at: AT, pendingId: null } as const;
  const fund: Transfer = {
    ...base,
    id: `escrow-fund:${jobId}`,
    debitAccountId: walletOf(ASSET, tenant),
    creditAccountId: escrow,
    amount: 1_000_000n,
    kind: 'posted',
    code: 'escrow-fund',
  };
  const pendings: Transfer[] = [];
  for (let p = 0; p < USAGE; p++) {
    const provider = `provider-${(job * USAGE + p) % 64}`;
    const legs = [
      [payableOf(ASSET, provider), 150_000n, 'usage-charge'],
      [treasuryOf(ASSET, `subnet-${job % 4}`, jobId), 7_500n, 'fee-subnet'],
      [platformFeesOf(ASSET, jobId), 3_000n, 'fee-platform'],
    ] as const;
    for (const [credit, amount, code] of legs) {
      pendings.push({
        ...base,
        id: `usage:${jobId}:${provider}:1:${code}`,
        debitAccountId: escrow,
        creditAccountId: credit,
        amount,
        kind: 'pending',
        code,
      });
    }
  }
  const settle: Transfer[] = pendings.map((t) => ({
    ...t,
    id: `post:${t.id}`,
    kind: 'post-pending',
    pendingId: t.id,
    amount: t.amount - 1n, // a partial post: the remainder returns to the escrow
  }));
  const spent = settle.reduce((s, t) => s + t.amount, 0n);
  settle.push({
    ...base,
    id: `refund:${jobId}`,
    debitAccountId: escrow,
    creditAccountId: walletOf(ASSET, tenant),
    amount: 1_000_000n - spent,
    kind: 'posted',
    code: 'refund',
  });
  return [[fund], pendings, settle];
};

const plainTableSql = (s: string) =>
  `CREATE TABLE "${s}".plain_transfers (id text, debit_account_id text, credit_account_id text, asset text,
     amount numeric(39, 0), kind text, pending_id text, code text, job_id text, at timestamptz)`;

const plainInsert = (s: string, client: pg.PoolClient, transfers: readonly Transfer[]) =>
  client.query(
    `INSERT INTO "${s}".plain_transfers
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])`,
    [
      transfers.map((t) => t.id),
      transfers.map((t) => t.debitAccountId),
      transfers.map((t) => t.creditAccountId),
      transfers.map(() => ASSET),
      transfers.map((t) => t.amount.toString()),
      transfers.map((t) => t.kind),
      transfers.map((t) => t.pendingId),
      transfers.map((t) => t.code),
      transfers.map((t) => t.jobId),
      transfers.map((t) => t.at),
    ],
  );

const main = async (): Promise<void> => {
  const schema = `bench_settlement_${randomBytes(5).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: URL, max: WRITERS + 1 });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  try {
    for (const sql of ledgerSchemaSql(schema)) await pool.query(sql);
    await pool.query(plainTableSql(schema));
    const ledger = new PostgresLedger(schema);
    const sqlOf = (client: pg.PoolClient): Sql => ({
      query: async <R>(text: string, params: readonly unknown[] = []) =>
        (await client.query(text, [...params])).rows as R[],
    });
    // Tenants' deposits, outside the measurement.
    {
      const client = await pool.connect();
      const deposits: Transfer[] = Array.from({ length: 32 }, (_, i) => ({
        id: `deposit:${i}`,
        debitAccountId: chainClearingOf(ASSET),
        creditAccountId: walletOf(ASSET, `tenant-${i}`),
        amount: 10n ** 15n,
        kind: 'posted',
        pendingId: null,
        code: 'deposit',
        jobId: null,
        at: AT,
      }));
      await ledger.apply(sqlOf(client), deposits);
      client.release();
    }
    const steps = Array.from({ length: JOBS }, (_, j) =>
      jobSteps(j).flatMap((step) => statementsOf(step, PER_STATEMENT)),
    );
    const statements = steps.reduce((n, s) => n + s.length, 0);
    const transfers = steps.reduce((n, s) => n + s.reduce((m, batch) => m + batch.length, 0), 0);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        const client = await pool.connect();
        const sql = sqlOf(client);
        try {
          for (let job = next++; job < JOBS; job = next++) {
            for (const batch of steps[job]!) {
              if (phase === 'ledger') await ledger.apply(sql, batch);
              else await plainInsert(schema, client, batch);
            }
          }
        } finally {
          client.release();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // The invariants still hold after the run (the database enforced them all along).
    let invariants = 'n/a';
    if (phase === 'ledger') {
      const client = await pool.connect();
      const totals = await ledger.totals(sqlOf(client), ASSET);
      client.release();
      const [count] = (
        await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}".ledger_transfers`)
      ).rows;
      const ok = totals.posted === 0n && totals.pending === 0n && Number(count!.n) === transfers + 32;
      invariants = ok ? 'ok' : `BROKEN (sum ${totals.posted}/${totals.pending}, ${count!.n} rows)`;
    }
    process.stdout.write(
      `${JSON.stringify({
        phase,
        jobs: JOBS,
        writers: WRITERS,
        transfers,
        statements,
        perStatement: PER_STATEMENT,
        seconds,
        transfersPerSecond: transfers / seconds,
        peakRssMb: process.resourceUsage().maxRSS / 1024,
        invariants,
      })}\n`,
    );
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
};

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
