import type { DomainEvent } from '@gpunet/contracts';
import type { EventMeta, UnitOfWork } from '../../src/app/settlement.ports';
import { Ledger } from '../../src/domain/ledger/ledger';
import { totalsOf } from '../../src/domain/reconciliation';
import { ZERO_BALANCES } from '../../src/domain/ledger/transfer';

export interface StoredDomainEvent extends DomainEvent {
  readonly meta: EventMeta;
}

/**
 * Settlement's storage in memory, for property tests: streams and the pure ledger. `transaction`
 * works on copies and swaps them in only when the work succeeds — all or nothing, like Postgres.
 */
export class MemoryStore {
  streams = new Map<string, readonly StoredDomainEvent[]>();
  ledger = Ledger.empty();
  /** Every appended event in commit order: what a rebuild replays. */
  log: { streamId: string; event: DomainEvent }[] = [];

  async transaction<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    const streams = new Map(this.streams);
    const ledger = this.ledger.clone();
    const appended: { streamId: string; event: DomainEvent }[] = [];
    const uow: UnitOfWork = {
      lockStreams: async () => undefined,
      readStream: async (streamId) => {
        const events = streams.get(streamId) ?? [];
        return { version: events.length, events: events.map(({ type, data }) => ({ type, data })) };
      },
      appendToStream: async (streamId, expectedVersion, events, meta) => {
        const current = streams.get(streamId) ?? [];
        if (current.length !== expectedVersion)
          throw new Error(`stream ${streamId} at ${current.length}, expected ${expectedVersion}`);
        streams.set(streamId, [...current, ...events.map((e) => ({ type: e.type, data: e.data, meta }))]);
        for (const event of events) appended.push({ streamId, event });
      },
      lockAccounts: async (ids) => new Map(ids.map((id) => [id, ledger.account(id) ?? ZERO_BALANCES])),
      applyTransfers: async (transfers) => ledger.apply(transfers),
      assetTotals: async (asset) => totalsOf(asset, ledger.accounts()),
    };
    const result = await work(uow);
    this.streams = streams;
    this.ledger = ledger;
    this.log.push(...appended);
    return result;
  }

  /** Every event of every stream whose id starts with `prefix`. */
  eventsOf(prefix: string): StoredDomainEvent[] {
    return [...this.streams.entries()]
      .filter(([id]) => id.startsWith(prefix))
      .flatMap(([, events]) => events);
  }
}
