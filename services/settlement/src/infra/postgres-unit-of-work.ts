import { type Clock, type DomainEvent, type MessageRegistry, newEventId } from '@gpunet/contracts';
import type { PostgresEventStore, Tx } from '@gpunet/eventing';
import type { EventMeta, UnitOfWork } from '../app/settlement.ports';
import type { Transfer, TransferResult } from '../domain/ledger/transfer';
import type { PostgresLedger } from './postgres-ledger';

/**
 * Advisory-lock class of settlement's stream locks. The two-key form of `pg_advisory_xact_lock`
 * lives in another key space than the one-key form the outbox relay uses, so they never collide.
 */
const STREAM_LOCK_CLASS = 0x5e771e;

/**
 * Settlement's unit of work inside one Postgres transaction: the service's event store, the
 * database-enforced ledger, and per-stream locks that serialize writers of one job (or subnet,
 * withdrawal): fifty concurrent usage reports for a job apply one after the other, each on the
 * state the previous one left — no lost update, no conflict to retry.
 */
export class PostgresUnitOfWork implements UnitOfWork {
  constructor(
    private readonly tx: Tx,
    private readonly store: PostgresEventStore,
    private readonly ledger: PostgresLedger,
    private readonly registry: MessageRegistry,
    private readonly clock: Clock,
  ) {}

  async lockStreams(streamIds: readonly string[]): Promise<void> {
    for (const streamId of [...new Set(streamIds)].sort()) {
      await this.tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [STREAM_LOCK_CLASS, streamId]);
    }
  }

  async readStream(streamId: string): Promise<{ version: number; events: DomainEvent[] }> {
    const stored = await this.store.readStream(streamId, { tx: this.tx });
    return {
      version: stored.at(-1)?.streamVersion ?? 0,
      events: stored.map((e) => ({ type: e.type, data: e.data })),
    };
  }

  async appendToStream(
    streamId: string,
    expectedVersion: number,
    events: readonly DomainEvent[],
    meta: EventMeta,
  ): Promise<void> {
    const occurredAt = this.clock.now().toISOString();
    await this.store.append(
      streamId,
      events.map((e) => ({
        eventId: newEventId(),
        type: e.type,
        version: this.registry.get(e.type).version,
        data: e.data,
        occurredAt,
        correlationId: meta.correlationId,
        causationId: meta.causationId,
      })),
      { expectedVersion: expectedVersion === 0 ? 'no_stream' : expectedVersion, tx: this.tx },
    );
  }

  lockAccounts(accountIds: readonly string[]) {
    return this.ledger.lockAccounts(this.tx, accountIds);
  }

  applyTransfers(transfers: readonly Transfer[]): Promise<TransferResult[]> {
    return this.ledger.apply(this.tx, transfers);
  }

  assetTotals(asset: string) {
    return this.ledger.totals(this.tx, asset);
  }
}
