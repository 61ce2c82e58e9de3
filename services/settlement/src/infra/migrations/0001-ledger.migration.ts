import type { MigrationInterface, QueryRunner } from 'typeorm';

const schemaOf = (runner: QueryRunner): string => {
  const schema = (runner.connection.options as { schema?: string }).schema;
  if (schema === undefined) throw new Error('the settlement migrations need DataSource.options.schema');
  return schema;
};

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
      id ~ '^[A-Z][A-Z0-9]{1,11}:(wallet|escrow|payable|treasury|fees|stake|chain):[A-Za-z0-9_@-]+$'
      AND length(owner) <= 260
      AND asset = split_part(id, ':', 1)
      AND purpose = split_part(id, ':', 2)
      AND id = asset || ':' || purpose || ':' || owner),
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
    sequence          bigserial NOT NULL UNIQUE,
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
   * Applies a batch of transfers atomically, in order, each checked against the balances the
   * previous ones left (the CHECK constraints fire on every UPDATE). Accounts are opened on first
   * use and locked in id order before anything changes, so concurrent batches never deadlock on
   * each other and never lose an update. Returns 'created' or 'exists' per transfer.
   */
  `CREATE FUNCTION "${s}".ledger_apply(
     p_ids text[], p_debits text[], p_credits text[], p_amounts numeric[], p_kinds text[],
     p_pending text[], p_codes text[], p_jobs text[], p_at timestamptz[]
   ) RETURNS text[] LANGUAGE plpgsql SET search_path = "${s}" AS $$
   DECLARE
     n int := coalesce(array_length(p_ids, 1), 0);
     results text[] := '{}';
     existing ledger_transfers%ROWTYPE;
     pend ledger_transfers%ROWTYPE;
     posted numeric;
   BEGIN
     PERFORM set_config('gpunet.ledger_apply', 'on', true);
     INSERT INTO ledger_accounts (id, asset, purpose, owner, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
       SELECT a, split_part(a, ':', 1), split_part(a, ':', 2),
              substr(a, length(split_part(a, ':', 1)) + length(split_part(a, ':', 2)) + 3),
              split_part(a, ':', 2) <> 'chain', split_part(a, ':', 2) = 'chain'
         FROM (SELECT DISTINCT unnest(p_debits || p_credits) AS a) accounts
       ON CONFLICT (id) DO NOTHING;
     PERFORM 1 FROM ledger_accounts WHERE id = ANY (p_debits || p_credits) ORDER BY id FOR UPDATE;
     FOR i IN 1 .. n LOOP
       SELECT * INTO existing FROM ledger_transfers WHERE id = p_ids[i];
       IF FOUND THEN
         IF existing.debit_account_id = p_debits[i] AND existing.credit_account_id = p_credits[i]
            AND existing.amount = p_amounts[i] AND existing.kind = p_kinds[i]
            AND existing.pending_id IS NOT DISTINCT FROM p_pending[i] AND existing.code = p_codes[i] THEN
           results := results || 'exists'::text;
           CONTINUE;
         END IF;
         RAISE EXCEPTION 'transfer % exists with other fields', p_ids[i] USING ERRCODE = 'GL001';
       END IF;
       IF p_kinds[i] IN ('post-pending', 'void-pending') THEN
         SELECT * INTO pend FROM ledger_transfers WHERE id = p_pending[i];
         IF NOT FOUND THEN
           RAISE EXCEPTION 'transfer %: no pending transfer %', p_ids[i], p_pending[i] USING ERRCODE = 'GL002';
         END IF;
         IF pend.kind <> 'pending' THEN
           RAISE EXCEPTION 'transfer %: % is not pending', p_ids[i], p_pending[i] USING ERRCODE = 'GL003';
         END IF;
         IF pend.debit_account_id <> p_debits[i] OR pend.credit_account_id <> p_credits[i] THEN
           RAISE EXCEPTION 'transfer %: accounts differ from %', p_ids[i], p_pending[i] USING ERRCODE = 'GL004';
         END IF;
         IF (p_kinds[i] = 'post-pending' AND p_amounts[i] > pend.amount)
            OR (p_kinds[i] = 'void-pending' AND p_amounts[i] <> pend.amount) THEN
           RAISE EXCEPTION 'transfer %: % of % against pending %', p_ids[i], p_kinds[i], p_amounts[i], pend.amount
             USING ERRCODE = 'GL005';
         END IF;
       ELSIF p_pending[i] IS NOT NULL THEN
         RAISE EXCEPTION 'transfer %: only posts and voids name a pending transfer', p_ids[i] USING ERRCODE = 'GL006';
       END IF;
       INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, asset, amount, kind, pending_id, code, job_id, at)
         VALUES (p_ids[i], p_debits[i], p_credits[i], split_part(p_debits[i], ':', 1), p_amounts[i], p_kinds[i],
                 p_pending[i], p_codes[i], p_jobs[i], p_at[i]);
       IF p_kinds[i] = 'posted' THEN
         UPDATE ledger_accounts SET debits_posted = debits_posted + p_amounts[i] WHERE id = p_debits[i];
         UPDATE ledger_accounts SET credits_posted = credits_posted + p_amounts[i] WHERE id = p_credits[i];
       ELSIF p_kinds[i] = 'pending' THEN
         UPDATE ledger_accounts SET debits_pending = debits_pending + p_amounts[i] WHERE id = p_debits[i];
         UPDATE ledger_accounts SET credits_pending = credits_pending + p_amounts[i] WHERE id = p_credits[i];
       ELSE
         posted := CASE WHEN p_kinds[i] = 'post-pending' THEN p_amounts[i] ELSE 0 END;
         UPDATE ledger_accounts SET debits_pending = debits_pending - pend.amount, debits_posted = debits_posted + posted
           WHERE id = p_debits[i];
         UPDATE ledger_accounts SET credits_pending = credits_pending - pend.amount, credits_posted = credits_posted + posted
           WHERE id = p_credits[i];
       END IF;
       results := results || 'created'::text;
     END LOOP;
     PERFORM set_config('gpunet.ledger_apply', 'off', true);
     RETURN results;
   END $$`,
];

export class LedgerTables1733000000000 implements MigrationInterface {
  readonly name = 'LedgerTables1733000000000';

  async up(runner: QueryRunner): Promise<void> {
    for (const sql of ledgerSchemaSql(schemaOf(runner))) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_apply`);
    await runner.query(`DROP TABLE IF EXISTS "${s}".ledger_transfers`);
    await runner.query(`DROP TABLE IF EXISTS "${s}".ledger_accounts`);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_transfers_immutable`);
    await runner.query(`DROP FUNCTION IF EXISTS "${s}".ledger_accounts_guard`);
  }
}

export const settlementMigrations = [LedgerTables1733000000000];
