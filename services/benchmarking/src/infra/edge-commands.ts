import {
  type BenchmarkReply,
  BenchmarkReplySchema,
  buildEnvelope,
  type InputOf,
  type ProbeLinksOnEdge,
  type RunBenchmarkOnEdge,
} from '@gpunet/contracts';
import type { NatsConnection } from '@nats-io/nats-core';

/** The edge did not answer (not connected, or too slow): the request stays pending until its deadline. */
export type EdgeCommandOutcome =
  BenchmarkReply | { readonly requestId: string; readonly outcome: 'unanswered'; readonly detail: string };

/**
 * Sends a benchmark or probe command to one edge over core NATS request/reply and returns its
 * immediate answer (accepted / declined), or `unanswered` when nobody replied in time.
 */
export const sendEdgeCommand = async (
  nc: NatsConnection,
  def: typeof RunBenchmarkOnEdge | typeof ProbeLinksOnEdge,
  edgeId: string,
  data: InputOf<typeof RunBenchmarkOnEdge> | InputOf<typeof ProbeLinksOnEdge>,
  options: { readonly prefix: string; readonly timeoutMs: number; readonly correlationId?: string },
): Promise<EdgeCommandOutcome> => {
  const envelope = buildEnvelope(def, data as never, {
    streamId: `benchmarking-${edgeId}`,
    ...(options.correlationId ? { correlationId: options.correlationId } : {}),
  });
  try {
    const reply = await nc.request(def.subject({ edgeId }, options.prefix), JSON.stringify(envelope), {
      timeout: options.timeoutMs,
    });
    const parsed = BenchmarkReplySchema.safeParse(reply.json());
    if (!parsed.success)
      return { requestId: data.requestId, outcome: 'unanswered', detail: 'reply off contract' };
    return parsed.data;
  } catch (error) {
    return { requestId: data.requestId, outcome: 'unanswered', detail: String(error).slice(0, 512) };
  }
};
