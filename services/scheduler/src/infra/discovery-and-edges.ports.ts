import {
  type CandidateProvider,
  FindCandidates,
  type QueryResponse,
  ReleaseOnEdge,
  ReleaseReplySchema,
  ReservationReplySchema,
  ReserveOnEdge,
  streamIdOf,
} from '@gpunet/contracts';
import type { EventingClient } from '@gpunet/eventing';
import type { PlacementPorts } from '../app/placement.engine';

/** Candidates asked per page of discovery's answer. */
const PAGE = 500;

/**
 * The engine's ports over the service's `EventingClient`: discovery's candidate query (every page)
 * and the edges' `ReserveOnEdge` / `ReleaseOnEdge`, each command about the job's stream and caused
 * by the decision that asked for it, each reply checked against its schema.
 */
export const discoveryAndEdgesPorts = (client: EventingClient): PlacementPorts => ({
  async findCandidates(query, exclude): Promise<readonly CandidateProvider[]> {
    const items: CandidateProvider[] = [];
    let cursor: string | null = null;
    do {
      const page: QueryResponse<typeof FindCandidates> = await client.ask(FindCandidates, {
        ...query,
        excludeProviders: [...exclude].slice(0, 1000),
        at: null,
        cursor,
        limit: PAGE,
      });
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return items;
  },

  reserve: (edgeId, request, cause, timeoutMs) =>
    client.command(ReserveOnEdge, {
      params: { edgeId },
      data: request,
      streamId: streamIdOf('job', request.jobId),
      cause,
      reply: ReservationReplySchema,
      timeoutMs,
    }),

  async release(edgeId, { jobId, reservationId, reason }, cause): Promise<void> {
    await client.command(ReleaseOnEdge, {
      params: { edgeId },
      data: { reservationId, reason },
      streamId: streamIdOf('job', jobId),
      cause,
      reply: ReleaseReplySchema,
    });
  },
});
