import {
  type Causation,
  type InputOf,
  type MessageDefinition,
  RankStartReplySchema,
  ReleaseOnEdge,
  ReleaseReplySchema,
  StartRankOnEdge,
  StopRanksOnEdge,
  StopRanksReplySchema,
  streamIdOf,
} from '@gpunet/contracts';
import type { EventingClient } from '@gpunet/eventing';
import type { z } from 'zod';
import type { EdgeCommands } from '../app/edge-commands.port';

/**
 * The edges' command subjects (`cmd.edge.{edgeId}.…`) over core NATS request/reply, through the
 * service's `EventingClient`: each command an envelope of the job's stream stamped with its cause,
 * a client span whose context rides in the headers, the reply validated. A reply off contract or
 * none in time throws: the process manager retries on its next tick.
 */
export const natsEdgeCommands = (client: EventingClient, timeoutMs: number): EdgeCommands => {
  const send = <D extends MessageDefinition, R extends z.ZodType>(
    def: D,
    edgeId: string,
    job: { readonly jobId: string; readonly cause: Causation },
    data: InputOf<D>,
    reply: R,
  ): Promise<z.output<R>> =>
    client.command(def, {
      params: { edgeId } as never,
      data,
      streamId: streamIdOf('job', job.jobId),
      cause: job.cause,
      reply,
      timeoutMs,
    });
  return {
    startRank: (edgeId, command, cause) =>
      send(StartRankOnEdge, edgeId, { jobId: command.jobId, cause }, command, RankStartReplySchema),
    stopRanks: (edgeId, request, cause) =>
      send(StopRanksOnEdge, edgeId, { jobId: request.jobId, cause }, request, StopRanksReplySchema),
    release: async (edgeId, { jobId, reservationId, reason }, cause) => {
      await send(ReleaseOnEdge, edgeId, { jobId, cause }, { reservationId, reason }, ReleaseReplySchema);
    },
  };
};
