import { Ledger } from '../src/domain/ledger/ledger';
import { ledgerHash } from '../src/domain/ledger/ledger-hash';
import { ZERO_BALANCES } from '../src/domain/ledger/transfer';
import { ledgerContract } from './suites/ledger.suite';

ledgerContract('pure (in memory)', async () => {
  const ledger = Ledger.empty();
  return {
    apply: async (transfers) => ledger.apply(transfers),
    balances: async (id) => {
      const a = ledger.account(id);
      return a
        ? {
            debitsPending: a.debitsPending,
            debitsPosted: a.debitsPosted,
            creditsPending: a.creditsPending,
            creditsPosted: a.creditsPosted,
          }
        : ZERO_BALANCES;
    },
    hash: async () => ledgerHash(ledger.accounts(), ledger.transfers()),
  };
});
