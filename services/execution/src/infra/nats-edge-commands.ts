import {
  buildEnvelope,
  type MessageDefinition,
  type PayloadOf,
  type RankStartReply,
  RankStartReplySchema,
  ReleaseOnEdge,
  ReleaseReplySchema,
  StartRankOnEdge,
  StopRanksOnEdge,
  type StopRanksReply,
  StopRanksReplySchema,
} from '@gpunet/contracts';
import { Attr, AttrValue, injectTraceContext, SpanKind, withSpan } from '@gpunet/telemetry';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { trace } from '@opentelemetry/api';
import type { z } from 'zod';
import type { EdgeCommands } from '../app/edge-commands.port';

const tracer = () => trace.getTracer('@gpunet/execution');

/** The edges' command subjects over core NATS request/reply (`cmd.edge.{edgeId}.…`). */
export const natsEdgeCommands = (deps: {
  nc: NatsConnection;
  prefix: string;
  timeoutMs: number;
}): EdgeCommands => {
  const { nc, prefix, timeoutMs } = deps;
  const ask = async <D extends MessageDefinition, R extends z.ZodType>(
    def: D,
    edgeId: string,
    data: PayloadOf<D>,
    streamId: string,
    reply: R,
  ): Promise<z.output<R>> => {
    const envelope = buildEnvelope(def, data as never, { streamId, correlationId: streamId });
    const subject = (def.subject as unknown as (params: { edgeId: string }, prefix: string) => string).call(
      def,
      { edgeId },
      prefix,
    );
    // One client span per command; its context rides in the headers, so the edge's work joins the trace.
    return withSpan(
      tracer(),
      `execution ${def.type}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [Attr.messagingSystem]: AttrValue.messagingSystemNats,
          [Attr.messagingDestination]: subject,
          [Attr.messagingConversationId]: streamId,
        },
      },
      async () => {
        const msg = await nc.request(subject, JSON.stringify(envelope), {
          timeout: timeoutMs,
          headers: injectTraceContext(headers()),
        });
        // A reply off contract throws here: the caller retries on its next tick.
        return reply.parse(msg.json());
      },
    );
  };
  return {
    startRank: (edgeId, command): Promise<RankStartReply> =>
      ask(StartRankOnEdge, edgeId, command, `job-${command.jobId}`, RankStartReplySchema),
    stopRanks: (edgeId, request): Promise<StopRanksReply> =>
      ask(StopRanksOnEdge, edgeId, request, `job-${request.jobId}`, StopRanksReplySchema),
    release: async (edgeId, reservationId, reason): Promise<void> => {
      await ask(ReleaseOnEdge, edgeId, { reservationId, reason }, reservationId, ReleaseReplySchema);
    },
  };
};
