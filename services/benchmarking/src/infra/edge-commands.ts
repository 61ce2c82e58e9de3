import {
  type BenchmarkReply,
  BenchmarkReplySchema,
  type Causation,
  type InputOf,
  InvalidMessageError,
  type ProbeLinksOnEdge,
  type RunBenchmarkOnEdge,
  streamIdOf,
} from '@gpunet/contracts';
import { type EventingClient, NoRespondersError, QueryTimeoutError } from '@gpunet/eventing';

/** The edge did not answer (not connected, or too slow): the request stays pending until its deadline. */
export type EdgeCommandOutcome =
  BenchmarkReply | { readonly requestId: string; readonly outcome: 'unanswered'; readonly detail: string };

type EdgeCommand = typeof RunBenchmarkOnEdge | typeof ProbeLinksOnEdge;

/**
 * Sends a benchmark or probe command to one edge (core NATS request/reply, on the edge's own
 * subject) and returns its immediate answer (accepted / declined), or `unanswered` when nobody
 * listens, nobody answered in time or the answer is off contract. Any other failure is thrown.
 */
export const sendEdgeCommand = async (
  client: EventingClient,
  def: EdgeCommand,
  edgeId: string,
  data: InputOf<EdgeCommand>,
  options: { readonly cause: Causation; readonly timeoutMs: number },
): Promise<EdgeCommandOutcome> => {
  try {
    return await client.command(def, {
      params: { edgeId },
      data,
      streamId: streamIdOf('benchmarking', edgeId),
      cause: options.cause,
      reply: BenchmarkReplySchema,
      timeoutMs: options.timeoutMs,
    });
  } catch (error) {
    if (
      error instanceof NoRespondersError ||
      error instanceof QueryTimeoutError ||
      error instanceof InvalidMessageError
    )
      return { requestId: data.requestId, outcome: 'unanswered', detail: String(error).slice(0, 512) };
    throw error;
  }
};
