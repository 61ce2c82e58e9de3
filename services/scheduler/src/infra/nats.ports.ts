import {
  buildEnvelope,
  type CandidateProvider,
  FindCandidates,
  type MessageDefinition,
  newEventId,
  ReleaseOnEdge,
  ReleaseReplySchema,
  ReservationReplySchema,
  type QueryResponse,
  type ReservationReply,
  ReserveOnEdge,
} from '@gpunet/contracts';
import { askQuery, type Database, type PostgresEventStore } from '@gpunet/eventing';
import type { NatsConnection } from '@nats-io/nats-core';
import type { PlacementPorts, ReserveRequest } from '../app/placement.engine';
import type { CandidateQuery } from '../domain/placement-plan';

const TERMINAL = new Set(['job.placed', 'job.unschedulable']);

/** The engine's ports over NATS (discovery's query, the edges' request/reply) and the event store. */
export const natsPorts = (deps: {
  nc: NatsConnection;
  prefix: string;
  store: PostgresEventStore;
  db: Database;
  queryTimeoutMs?: number;
}): PlacementPorts => {
  const { nc, prefix, store, db } = deps;
  return {
    async findCandidates(
      query: CandidateQuery,
      exclude: readonly string[],
    ): Promise<readonly CandidateProvider[]> {
      const items: CandidateProvider[] = [];
      let cursor: string | null = null;
      do {
        const page: QueryResponse<typeof FindCandidates> = await askQuery(
          nc,
          FindCandidates,
          {
            ...query,
            excludeProviders: [...exclude].slice(0, 1000),
            at: null,
            cursor,
            limit: 500,
          },
          { prefix, timeoutMs: deps.queryTimeoutMs ?? 5_000 },
        );
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor !== null);
      return items;
    },

    async reserve(edgeId: string, request: ReserveRequest, timeoutMs: number): Promise<ReservationReply> {
      const envelope = buildEnvelope(ReserveOnEdge, request, {
        streamId: request.jobId,
        correlationId: request.jobId,
      });
      const reply = await nc.request(ReserveOnEdge.subject({ edgeId }, prefix), JSON.stringify(envelope), {
        timeout: timeoutMs,
      });
      return ReservationReplySchema.parse(reply.json());
    },

    async release(edgeId: string, reservationId: string, reason: string): Promise<void> {
      const envelope = buildEnvelope(ReleaseOnEdge, { reservationId, reason }, { streamId: reservationId });
      const reply = await nc.request(ReleaseOnEdge.subject({ edgeId }, prefix), JSON.stringify(envelope), {
        timeout: 5_000,
      });
      ReleaseReplySchema.parse(reply.json());
    },

    async emit(jobId: string, def: MessageDefinition, data: unknown): Promise<void> {
      // The decision and "no longer owed" commit together: a restart never re-places a placed job.
      await db.transaction(async (tx) => {
        await store.append(
          `job-${jobId}`,
          [
            {
              eventId: newEventId(),
              type: def.type,
              version: def.version,
              data,
              occurredAt: new Date().toISOString(),
              correlationId: jobId,
              causationId: null,
            },
          ],
          { expectedVersion: 'any', tx },
        );
        if (TERMINAL.has(def.type))
          await tx.execute(`DELETE FROM "${tx.schema}".open_jobs WHERE job_id = $1`, [jobId]);
      });
    },
  };
};
