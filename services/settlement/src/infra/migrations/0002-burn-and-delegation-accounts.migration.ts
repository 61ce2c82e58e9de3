import { migrationSchemaOf } from '@gpunet/eventing';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { LedgerTables1733000000000 } from './0001-ledger.migration';

const idFormat = (purposes: string, maxOwner: number): string =>
  `CHECK (
      id ~ '^[A-Z][A-Z0-9]{1,11}:(${purposes}):[A-Za-z0-9_@-]+(#[0-9a-f]{2})?$'
      AND length(owner) <= ${maxOwner}
      AND asset = split_part(id, ':', 1)
      AND purpose = split_part(id, ':', 2)
      AND owner = split_part(split_part(id, ':', 3), '#', 1))`;

/**
 * Accounts of subnet governance (ADR 0071): `burn` (a subnet's burned slashes) joins the purposes,
 * and an owner may be three entity ids (a delegation's stake, `<delegator>@<subnet>@<provider>`).
 */
export class BurnAndDelegationAccounts1765000000000 implements MigrationInterface {
  readonly name = 'BurnAndDelegationAccounts1765000000000';

  async up(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".ledger_accounts DROP CONSTRAINT ledger_accounts_id_format`);
    await runner.query(
      `ALTER TABLE "${s}".ledger_accounts ADD CONSTRAINT ledger_accounts_id_format ${idFormat('wallet|escrow|payable|treasury|fees|stake|burn|chain', 386)}`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    const s = migrationSchemaOf(runner);
    await runner.query(`ALTER TABLE "${s}".ledger_accounts DROP CONSTRAINT ledger_accounts_id_format`);
    await runner.query(
      `ALTER TABLE "${s}".ledger_accounts ADD CONSTRAINT ledger_accounts_id_format ${idFormat('wallet|escrow|payable|treasury|fees|stake|chain', 260)}`,
    );
  }
}

export const settlementMigrations = [LedgerTables1733000000000, BurnAndDelegationAccounts1765000000000];
