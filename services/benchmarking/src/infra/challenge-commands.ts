import {
  type Causation,
  type ChallengeCommitReply,
  ChallengeCommitReplySchema,
  type ChallengeOpenReply,
  ChallengeOpenReplySchema,
  type InputOf,
  InvalidMessageError,
  OpenChallengeOnEdge,
  RunChallengeOnEdge,
  streamIdOf,
} from '@gpunet/contracts';
import { type EventingClient, NoRespondersError, QueryTimeoutError } from '@gpunet/eventing';

/**
 * What came back from a challenge command: the edge's validated reply, nothing (nobody listens, or
 * nothing within the time allowed), or an answer off contract. Bytes are the JSON payloads' sizes
 * (the command's data as sent, the reply as it parsed; an off-contract reply counts 0).
 */
export type ChallengeExchange<R> = (
  | { readonly kind: 'reply'; readonly reply: R }
  | { readonly kind: 'no-answer'; readonly detail: string }
  | { readonly kind: 'malformed'; readonly detail: string }
) & { readonly bytesSent: number; readonly bytesReceived: number };

const size = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

const exchange = async <R>(send: () => Promise<R>, data: unknown): Promise<ChallengeExchange<R>> => {
  const bytesSent = size(data);
  try {
    const reply = await send();
    return { kind: 'reply', reply, bytesSent, bytesReceived: size(reply) };
  } catch (error) {
    if (error instanceof NoRespondersError || error instanceof QueryTimeoutError)
      return { kind: 'no-answer', detail: String(error).slice(0, 512), bytesSent, bytesReceived: 0 };
    if (error instanceof InvalidMessageError)
      return { kind: 'malformed', detail: String(error).slice(0, 512), bytesSent, bytesReceived: 0 };
    throw error;
  }
};

/** Sends a challenge to one edge (core request/reply on its own subject) and waits up to `timeoutMs`. */
export const sendChallenge = (
  client: EventingClient,
  edgeId: string,
  data: InputOf<typeof RunChallengeOnEdge>,
  options: { readonly cause: Causation; readonly timeoutMs: number },
): Promise<ChallengeExchange<ChallengeCommitReply>> =>
  exchange(
    () =>
      client.command(RunChallengeOnEdge, {
        params: { edgeId },
        data,
        streamId: streamIdOf('benchmarking', edgeId),
        cause: options.cause,
        reply: ChallengeCommitReplySchema,
        timeoutMs: options.timeoutMs,
      }),
    data,
  );

/** Asks the edge to open its committed challenge. */
export const sendOpening = (
  client: EventingClient,
  edgeId: string,
  data: InputOf<typeof OpenChallengeOnEdge>,
  options: { readonly cause: Causation; readonly timeoutMs: number },
): Promise<ChallengeExchange<ChallengeOpenReply>> =>
  exchange(
    () =>
      client.command(OpenChallengeOnEdge, {
        params: { edgeId },
        data,
        streamId: streamIdOf('benchmarking', edgeId),
        cause: options.cause,
        reply: ChallengeOpenReplySchema,
        timeoutMs: options.timeoutMs,
      }),
    data,
  );
