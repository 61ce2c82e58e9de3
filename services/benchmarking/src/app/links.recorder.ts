import { LinkMeasured, newEventId } from '@gpunet/contracts';
import type { PostgresEventStore, Tx } from '@gpunet/eventing';
import type { LinkMeasurement } from '../domain/links';
import { upsertLinks } from '../infra/projections';
import type { BenchmarkingMetrics } from './benchmarking.metrics';

/** The event-store stream holding the links one host measured (the sending end of each direction). */
export const linkStreamId = (prober: string): string => `benchmarking-links-${prober}`;

/**
 * Records measured links in `tx`, however they were measured: `link.measured` events on each sender's
 * link stream (published through the outbox) and the links projection. The caller refits the
 * coordinates after commit.
 */
export const recordLinks = async (
  deps: { readonly store: PostgresEventStore; readonly metrics: BenchmarkingMetrics },
  tx: Tx,
  links: readonly LinkMeasurement[],
  cause: { readonly correlationId: string; readonly causationId: string; readonly occurredAt: string },
): Promise<void> => {
  const bySender = new Map<string, LinkMeasurement[]>();
  for (const l of links) bySender.set(l.a, [...(bySender.get(l.a) ?? []), l]);
  for (const [sender, measured] of bySender)
    await deps.store.append(
      linkStreamId(sender),
      measured.map((l) => ({
        eventId: newEventId(),
        type: LinkMeasured.type,
        version: LinkMeasured.version,
        data: l,
        occurredAt: cause.occurredAt,
        correlationId: cause.correlationId,
        causationId: cause.causationId,
      })),
      { expectedVersion: 'any', tx },
    );
  await upsertLinks(tx, links);
  tx.onCommit(() => deps.metrics.linksMeasured.inc(links.length));
};
