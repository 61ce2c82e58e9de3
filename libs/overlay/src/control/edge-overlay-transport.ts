import {
  AttachOverlay,
  buildEnvelope,
  ConnectOverlayPeers,
  DetachOverlay,
  type InputOf,
  type OverlayAttachReply,
  OverlayAttachReplySchema,
  type OverlayConnectReply,
  OverlayConnectReplySchema,
} from '@gpunet/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import type { z } from 'zod';
import {
  describeError,
  type OverlayDetachReply,
  OverlayDetachReplySchema,
  type Unanswered,
  unanswered,
} from '../command-plane/replies';

/**
 * How the coordinator reaches an edge's overlay agent. Never throws: the edge's reply, or
 * `unanswered` with the reason when it cannot be reached, does not answer in time or answers off
 * contract.
 */
export interface EdgeOverlayTransport {
  attach(
    edgeId: string,
    command: InputOf<typeof AttachOverlay>,
    timeoutMs: number,
  ): Promise<OverlayAttachReply | Unanswered>;
  connect(
    edgeId: string,
    command: InputOf<typeof ConnectOverlayPeers>,
    timeoutMs: number,
  ): Promise<OverlayConnectReply | Unanswered>;
  detach(
    edgeId: string,
    command: InputOf<typeof DetachOverlay>,
    timeoutMs: number,
  ): Promise<OverlayDetachReply | Unanswered>;
}

export interface NatsEdgeOverlayTransportOptions {
  /** Subject namespace (tests). Default ''. */
  readonly prefix?: string;
  /** Correlation id of the envelopes (the job's, so one trace spans the job's commands). */
  readonly correlationId?: (jobId: string) => string | undefined;
}

type Def = typeof AttachOverlay | typeof ConnectOverlayPeers | typeof DetachOverlay;

/** The overlay commands over core NATS request/reply (what the execution service uses). */
export const natsEdgeOverlayTransport = (
  nc: NatsConnection,
  options: NatsEdgeOverlayTransportOptions = {},
): EdgeOverlayTransport => {
  const request = async <R>(
    def: Def,
    schema: z.ZodType<R>,
    edgeId: string,
    data: InputOf<Def>,
    timeoutMs: number,
  ): Promise<R | Unanswered> => {
    let subject: string;
    let body: string;
    try {
      subject = def.subject({ edgeId }, options.prefix ?? '');
      const correlationId = options.correlationId?.(data.jobId);
      body = JSON.stringify(
        buildEnvelope(def, data as never, {
          streamId: `job-${data.jobId}`,
          ...(correlationId ? { correlationId } : {}),
        }),
      );
    } catch (error) {
      return unanswered(`the ${def.type} command is invalid: ${describeError(error)}`);
    }
    let reply;
    try {
      reply = await nc.request(subject, body, { timeout: timeoutMs });
    } catch (error) {
      return unanswered(`no answer from the edge within ${timeoutMs} ms: ${describeError(error)}`);
    }
    let json: unknown;
    try {
      json = reply.json();
    } catch (error) {
      return unanswered(`the edge's reply is not JSON: ${describeError(error)}`);
    }
    const parsed = schema.safeParse(json);
    return parsed.success
      ? parsed.data
      : unanswered(`the edge's reply is off contract: ${parsed.error.message}`);
  };
  return {
    attach: (edgeId, command, timeoutMs) =>
      request(AttachOverlay, OverlayAttachReplySchema, edgeId, command, timeoutMs),
    connect: (edgeId, command, timeoutMs) =>
      request(ConnectOverlayPeers, OverlayConnectReplySchema, edgeId, command, timeoutMs),
    detach: (edgeId, command, timeoutMs) =>
      request(DetachOverlay, OverlayDetachReplySchema, edgeId, command, timeoutMs),
  };
};
