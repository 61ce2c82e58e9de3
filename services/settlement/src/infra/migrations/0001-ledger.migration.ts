import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ledger's tables and the rules the database itself enforces (ADR 0010), whoever writes:
 * - an account id says its asset, purpose and owner, and its balance rule follows from its purpose;
 * - no balance is negative, and no account is overdrawn counting pending debits (CHECK);
 * - both sides of a transfer are in the transfer's asset (composite foreign keys);
 * - a transfer is immutable (trigger), and a pending transfer is resolved at most once (unique index);
 * - balances change only inside `ledger_apply` (trigger), which moves both sides of every transfer.
 */
export const ledgerSchemaSql = (s: string): string[] => [
  `CREATE TABLE "${s}".ledger_accounts (
    id              text COLLATE "C" PRIMARY KEY,
    asset           text NOT NULL,
    purpose         text NOT NULL,
    owner           text NOT NULL,
    debits_must_not_exceed_credits boolean NOT NULL,
    credits_must_not_exceed_debits boolean NOT NULL,
    debits_pending  numeric(39, 0) NOT NULL DEFAULT 0,
    debits_posted   numeric(39, 0) NOT NULL DEFAULT 0,
    credits_pending numeric(39, 0) NOT NULL DEFAULT 0,
    credits_posted  numeric(39, 0) NOT NULL DEFAULT 0,
    UNIQUE (id, asset),
    CONSTRAINT ledger_accounts_id_format CHECK (
      id ~ '^[A-Z][A-Z0-9]{1,11}:(wallet|escrow|payable|treasury|fees|stake|chain):[A-Za-z0-9_@-]+(#[0-9a-f]{2})?$'
      AND length(owner) <= 260
      AND asset = split_part(id, ':', 1)
      AND purpose = split_part(id, ':', 2)
      AND owner = split_part(split_part(id, ':', 3), '#', 1)),
    CONSTRAINT ledger_accounts_rule_by_purpose CHECK (
      credits_must_not_exceed_debits = (purpose = 'chain')
      AND debits_must_not_exceed_credits = (purpose <> 'chain')),
    CONSTRAINT ledger_accounts_non_negative CHECK (
      debits_pending >= 0 AND debits_posted >= 0 AND credits_pending >= 0 AND credits_posted >= 0),
    CONSTRAINT ledger_accounts_debits_within_credits CHECK (
      NOT debits_must_not_exceed_credits OR debits_pending + debits_posted <= credits_posted),
    CONSTRAINT ledger_accounts_credits_within_debits CHECK (
      NOT credits_must_not_exceed_debits OR credits_pending + credits_posted <= debits_posted)
  )`,
  `CREATE TABLE "${s}".ledger_transfers (
    sequence          bigserial NOT NULL,
    id                text COLLATE "C" PRIMARY KEY,
    debit_account_id  text COLLATE "C" NOT NULL,
    credit_account_id text COLLATE "C" NOT NULL,
    asset             text NOT NULL,
    amount            numeric(39, 0) NOT NULL CONSTRAINT ledger_transfers_amount_positive CHECK (amount > 0),
    kind              text NOT NULL CHECK (kind IN ('posted', 'pending', 'post-pending', 'void-pending')),
    pending_id        text COLLATE "C" REFERENCES "${s}".ledger_transfers (id),
    code              text NOT NULL,
    job_id            text,
    at                timestamptz NOT NULL,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (debit_account_id, asset) REFERENCES "${s}".ledger_accounts (id, asset),
    FOREIGN KEY (credit_account_id, asset) REFERENCES "${s}".ledger_accounts (id, asset),
    CONSTRAINT ledger_transfers_two_accounts CHECK (debit_account_id <> credit_account_id),
    CONSTRAINT ledger_transfers_pending_id CHECK ((kind IN ('post-pending', 'void-pending')) = (pending_id IS NOT NULL))
  )`,
  // A pending transfer is posted or voided at most once, whatever the id of the resolving transfer.
  `CREATE UNIQUE INDEX ledger_transfers_resolve_once ON "${s}".ledger_transfers (pending_id) WHERE pending_id IS NOT NULL`,
  // Where each chain adapter's deposit scan resumes (deposits are credited once by id anyway).
  `CREATE TABLE "${s}".chain_cursors (
    chain      text NOT NULL,
    asset      text NOT NULL,
    cursor     text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, asset)
  )`,
  `CREATE INDEX ledger_transfers_by_job ON "${s}".ledger_transfers (job_id, sequence) WHERE job_id IS NOT NULL`,
  `CREATE INDEX ledger_transfers_by_debit ON "${s}".ledger_transfers (debit_account_id, sequence)`,
  `CREATE INDEX ledger_transfers_by_credit ON "${s}".ledger_transfers (credit_account_id, sequence)`,
  `CREATE FUNCTION "${s}".ledger_transfers_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     RAISE EXCEPTION 'ledger transfers are immutable' USING ERRCODE = 'GL100';
   END $$`,
  `CREATE TRIGGER ledger_transfers_immutable BEFORE UPDATE OR DELETE ON "${s}".ledger_transfers
     FOR EACH ROW EXECUTE FUNCTION "${s}".ledger_transfers_immutable()`,
  `CREATE TRIGGER ledger_transfers_no_truncate BEFORE TRUNCATE ON "${s}".ledger_transfers
     FOR EACH STATEMENT EXECUTE FUNCTION "${s}".ledger_transfers_immutable()`,
  // Balances move only with transfers: outside ledger_apply, an UPDATE of a balance is refused.
  `CREATE FUNCTION "${s}".ledger_accounts_guard() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF current_setting('gpunet.ledger_apply', true) IS DISTINCT FROM 'on' THEN
       RAISE EXCEPTION 'ledger balances change only through transfers (ledger_apply)' USING ERRCODE = 'GL101';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER ledger_accounts_guard BEFORE UPDATE OR DELETE ON "${s}".ledger_accounts
     FOR EACH ROW EXECUTE FUNCTION "${s}".ledger_accounts_guard()`,
  /*
   * Applies a batch of transfers atomically, set-based: open the accounts it names, lock them in id
   * order (concurrent batches never deadlock on them and never lose an update), insert the
   * transfers (an id that exists with the same fields is `exists`, with others an error), check
   * every post and void against its pending transfer, then move each account's four balances once,
   * by the batch's net amounts — where the CHECK constraints judge the result. A batch is one
   * decision: nobody can observe its intermediate states, so its accounts are judged after it.
   * Returns 'created' or 'exists' per transfer, in order.
   */
  `CREATE FUNCTION "${s}".ledger_apply(
     p_ids text[], p_debits text[], p_credits text[], p_amounts numeric[], p_kinds text[],
     p_pending text[], p_codes text[], p_jobs text[], p_at timestamptz[]
   ) RETURNS text[] LANGUAGE plpgsql SET search_path = "${s}" AS $$
   DECLARE
     inserted text[];
     results text[];
     bad record;
   BEGIN
     IF EXISTS (SELECT 1 FROM unnest(p_kinds, p_pending) AS b(kind, pending_id)
                 WHERE b.kind IN ('posted', 'pending') AND b.pending_id IS NOT NULL) THEN
       RAISE EXCEPTION 'only posts and voids name a pending transfer' USING ERRCODE = 'GL006';
     END IF;
     PERFORM set_config('gpunet.ledger_apply', 'on', true);
     INSERT INTO ledger_accounts (id, asset, purpose, owner, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
       SELECT a, split_part(a, ':', 1), split_part(a, ':', 2), split_part(split_part(a, ':', 3), '#', 1),
              split_part(a, ':', 2) <> 'chain', split_part(a, ':', 2) = 'chain'
         FROM (SELECT DISTINCT unnest(p_debits || p_credits) AS a) accounts
       ON CONFLICT (id) DO NOTHING;
     PERFORM 1 FROM ledger_accounts WHERE id = ANY (p_debits || p_credits) ORDER BY id FOR UPDATE;

     WITH added AS (
       INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, asset, amount, kind, pending_id, code, job_id, at)
         SELECT b.id, b.debit, b.credit, split_part(b.debit, ':', 1), b.amount, b.kind, b.pending_id, b.code, b.job_id, b.at
           FROM unnest(p_ids, p_debits, p_credits, p_amounts, p_kinds, p_pending, p_codes, p_jobs, p_at)
                WITH ORDINALITY AS b(id, debit, credit, amount, kind, pending_id, code, job_id, at, ord)
          ORDER BY b.ord
       ON CONFLICT (id) DO NOTHING
       RETURNING id)
     SELECT coalesce(array_agg(id), '{}') INTO inserted FROM added;

     -- What was not inserted exists already (or twice in the batch): it must be the same transfer.
     SELECT b.id INTO bad
       FROM unnest(p_ids, p_debits, p_credits, p_amounts, p_kinds, p_pending, p_codes)
            AS b(id, debit, credit, amount, kind, pending_id, code)
       JOIN ledger_transfers t ON t.id = b.id
      WHERE (t.debit_account_id, t.credit_account_id, t.amount, t.kind, t.code) IS DISTINCT FROM
            (b.debit, b.credit, b.amount, b.kind, b.code)
         OR t.pending_id IS DISTINCT FROM b.pending_id
      LIMIT 1;
     IF FOUND THEN
       RAISE EXCEPTION 'transfer % exists with other fields', bad.id USING ERRCODE = 'GL001';
     END IF;

     -- Posts and voids against their pending transfer (existence: the foreign key; once: the unique index).
     SELECT b.id, b.kind, b.amount, b.debit, b.credit, p.kind AS pending_kind, p.amount AS pending_amount,
            p.debit_account_id AS pending_debit, p.credit_account_id AS pending_credit INTO bad
       FROM unnest(p_ids, p_debits, p_credits, p_amounts, p_kinds, p_pending) AS b(id, debit, credit, amount, kind, pending_id)
       JOIN ledger_transfers p ON p.id = b.pending_id
      WHERE b.kind IN ('post-pending', 'void-pending') AND b.id = ANY (inserted)
        AND (p.kind <> 'pending' OR p.debit_account_id <> b.debit OR p.credit_account_id <> b.credit
             OR (b.kind = 'post-pending' AND b.amount > p.amount) OR (b.kind = 'void-pending' AND b.amount <> p.amount))
      LIMIT 1;
     IF FOUND THEN
       IF bad.pending_kind <> 'pending' THEN
         RAISE EXCEPTION 'transfer %: its pending transfer is not pending', bad.id USING ERRCODE = 'GL003';
       ELSIF bad.pending_debit <> bad.debit OR bad.pending_credit <> bad.credit THEN
         RAISE EXCEPTION 'transfer %: accounts differ from its pending transfer''s', bad.id USING ERRCODE = 'GL004';
       END IF;
       RAISE EXCEPTION 'transfer %: % of % against pending %', bad.id, bad.kind, bad.amount, bad.pending_amount
         USING ERRCODE = 'GL005';
     END IF;

     -- Each account moves once, by the net of the batch; the CHECK constraints judge the result.
     UPDATE ledger_accounts a
        SET debits_pending = a.debits_pending + d.dp, debits_posted = a.debits_posted + d.dpo,
            credits_pending = a.credits_pending + d.cp, credits_posted = a.credits_posted + d.cpo
       FROM (
         SELECT acct, sum(dp) AS dp, sum(dpo) AS dpo, sum(cp) AS cp, sum(cpo) AS cpo
           FROM (
             SELECT side.acct, side.is_debit, f.kind, f.amount, p.amount AS pending_amount,
                    CASE WHEN side.is_debit THEN pend ELSE 0 END AS dp,
                    CASE WHEN side.is_debit THEN post ELSE 0 END AS dpo,
                    CASE WHEN side.is_debit THEN 0 ELSE pend END AS cp,
                    CASE WHEN side.is_debit THEN 0 ELSE post END AS cpo
               FROM (SELECT b.*, row_number() OVER (PARTITION BY b.id ORDER BY b.ord) AS occurrence
                       FROM unnest(p_ids, p_debits, p_credits, p_amounts, p_kinds, p_pending)
                            WITH ORDINALITY AS b(id, debit, credit, amount, kind, pending_id, ord)) f
               LEFT JOIN ledger_transfers p ON p.id = f.pending_id
               CROSS JOIN LATERAL (VALUES (f.debit, true), (f.credit, false)) AS side(acct, is_debit)
               CROSS JOIN LATERAL (SELECT
                   CASE f.kind WHEN 'pending' THEN f.amount WHEN 'posted' THEN 0 ELSE -p.amount END AS pend,
                   CASE f.kind WHEN 'posted' THEN f.amount WHEN 'post-pending' THEN f.amount ELSE 0 END AS post) AS m
              WHERE f.occurrence = 1 AND f.id = ANY (inserted)
           ) legs
          GROUP BY acct
       ) d
      WHERE a.id = d.acct;

     SELECT array_agg(CASE WHEN b.id = ANY (inserted) AND b.occurrence = 1 THEN 'created' ELSE 'exists' END ORDER BY b.ord)
       INTO results
       FROM (SELECT u.id, u.ord, row_number() OVER (PARTITION BY u.id ORDER BY u.ord) AS occurrence
               FROM unnest(p_ids) WITH ORDINALITY AS u(id, ord)) b;
     PERFORM set_config('gpunet.ledger_apply', 'off', true);
     RETURN coalesce(results, '{}');
   END $$`,
];

export class LedgerTables1733000000000 implements MigrationInterface {
  readonly name = 'LedgerTables1733000000000';

  async up(runner: QueryRunner): Promise<void> {
    for (const sql of ledgerSchemaSql(migrationSchemaOf(runner))) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_apply`);
    await runner.query(`DROP TABLE IF EXISTS "${s}".ledger_transfers`);
    await runner.query(`DROP TABLE IF EXISTS "${s}".ledger_accounts`);
    await runner.query(`DROP TABLE IF EXISTS "${s}".chain_cursors`);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_transfers_immutable`);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_accounts_guard`);
  }
}
