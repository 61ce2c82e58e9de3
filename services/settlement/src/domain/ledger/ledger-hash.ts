import type { AccountSpec } from '../accounts';
import type { AccountBalances, Transfer } from './transfer';

/**
 * A fingerprint of a ledger: every account's balances and every transfer, in id order, so that two
 * ledgers built by replaying the same log — in memory or in Postgres — compare equal, whatever order
 * concurrent writers recorded them in. FNV-1a 64 over a canonical text (pure: no crypto module in
 * the domain); it detects differences, it does not resist forgery.
 */
export const ledgerHash = (
  accounts: readonly (AccountSpec & AccountBalances)[],
  transfers: readonly Transfer[],
): string => {
  const lines: string[] = [];
  for (const a of [...accounts].sort((x, y) => compare(x.id, y.id))) {
    lines.push(`A|${a.id}|${a.debitsPending}|${a.debitsPosted}|${a.creditsPending}|${a.creditsPosted}`);
  }
  for (const t of [...transfers].sort((x, y) => compare(x.id, y.id))) {
    lines.push(
      `T|${t.id}|${t.debitAccountId}|${t.creditAccountId}|${t.amount}|${t.kind}|${t.pendingId ?? ''}|${t.code}|${t.jobId ?? ''}|${Date.parse(t.at)}`,
    );
  }
  return fnv1a64(lines.join('\n'));
};

/** Code-unit order, the same as Postgres's `COLLATE "C"`, independent of locale. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

export const fnv1a64 = (text: string): string => {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * FNV_PRIME) & MASK;
  }
  return hash.toString(16).padStart(16, '0');
};
