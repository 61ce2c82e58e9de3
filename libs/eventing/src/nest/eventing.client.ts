import {
  type Causation,
  InvalidMessageError,
  type InputOf,
  type MessageDefinition,
  type QueryDefinition,
  type QueryRequest,
  type QueryResponse,
  type SubjectParams,
  toIssues,
} from '@gpunet/contracts';
import { errors as natsErrors, headers as natsHeaders, type Msg } from '@nats-io/nats-core';
import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import type { z } from 'zod';
import type { Envelopes } from '../envelopes';
import { NoRespondersError, NotSupportedError, QueryTimeoutError } from '../errors';
import type { NatsHandle } from '../jetstream/connection';
import { askQuery } from '../query/query';
import { Attr, AttrValue, inSpan, injectIntoHeaders, SpanKind } from '../tracing';
import { isQueryDefinition } from './patterns';

export interface EventingClientOptions {
  readonly nats: NatsHandle;
  readonly envelopes: Envelopes;
  /** Namespace prefix of subjects (tests). Default ''. */
  readonly prefix?: string;
  /** Default time to wait for an answer, in ms. Default 5 000. */
  readonly timeoutMs?: number;
}

/** A command sent to one recipient that answers it (an edge): its target, payload and reply. */
export interface CommandRequest<D extends MessageDefinition, R extends z.ZodType> {
  /** The subject's `{tokens}` (`{ edgeId }`). */
  readonly params: SubjectParams<D['subjectTemplate']>;
  readonly data: InputOf<D>;
  /** The stream the command is about (the envelope's `streamId`), e.g. `job-<id>`. */
  readonly streamId: string;
  readonly cause: Causation;
  /** The reply's schema: what comes back is checked against it. */
  readonly reply: R;
  readonly timeoutMs?: number;
}

/**
 * The service's client over NATS, as a Nest `ClientProxy`: queries (`ask`, or `send(query, request)`
 * for an Observable) and request/reply commands to edges (`command`), every request validated before
 * it leaves and every answer before it is returned, trace context in the headers. Events are not
 * emitted through it: a service appends them and the outbox publishes them (`emit` refuses).
 */
export class EventingClient extends ClientProxy {
  constructor(private readonly options: EventingClientOptions) {
    super();
  }

  /** Asks `query` and returns the validated response (`askQuery`'s errors). */
  ask<Q extends QueryDefinition>(
    query: Q,
    request: QueryRequest<Q>,
    options: { timeoutMs?: number } = {},
  ): Promise<QueryResponse<Q>> {
    return askQuery(this.options.nats.nc, query, request, {
      prefix: this.options.prefix ?? '',
      timeoutMs: options.timeoutMs ?? this.options.timeoutMs ?? 5_000,
    });
  }

  /**
   * Sends a command to the one recipient that answers it and returns its validated reply. Throws
   * `QueryTimeoutError` (no answer in time), `NoRespondersError` (nobody listens: the edge is
   * offline) or `InvalidMessageError` (a command or reply off contract).
   */
  async command<D extends MessageDefinition, R extends z.ZodType>(
    def: D,
    request: CommandRequest<D, R>,
  ): Promise<z.output<R>> {
    const envelope = this.options.envelopes.message(def, request.data, request.streamId, request.cause);
    const subject = def.subject(request.params as never, this.options.prefix ?? '');
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs ?? 5_000;
    return inSpan(
      `send ${def.type}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [Attr.messagingSystem]: AttrValue.messagingSystemNats,
          [Attr.messagingDestination]: subject,
          [Attr.messagingMessageId]: envelope.eventId,
        },
      },
      async () => {
        const hdrs = natsHeaders();
        injectIntoHeaders(hdrs);
        let msg: Msg;
        try {
          msg = await this.options.nats.nc.request(subject, JSON.stringify(envelope), {
            timeout: timeoutMs,
            headers: hdrs,
          });
        } catch (error) {
          if (
            error instanceof natsErrors.NoRespondersError ||
            (error instanceof natsErrors.RequestError && error.isNoResponders())
          )
            throw new NoRespondersError(`nobody answers ${subject}`, { cause: error });
          if (error instanceof natsErrors.TimeoutError)
            throw new QueryTimeoutError(`${def.type} to ${subject} got no answer within ${timeoutMs} ms`, {
              cause: error,
            });
          throw error;
        }
        let body: unknown;
        try {
          body = msg.json();
        } catch {
          body = undefined;
        }
        const reply = request.reply.safeParse(body);
        if (!reply.success) throw new InvalidMessageError(`${def.type} reply`, toIssues(reply.error));
        return reply.data;
      },
    );
  }

  connect(): Promise<NatsHandle> {
    return Promise.resolve(this.options.nats);
  }

  /** The connection belongs to the service's `EventingRuntime`, which closes it. */
  close(): void {}

  unwrap<T>(): T {
    return this.options.nats as T;
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const pattern: unknown = packet.pattern;
    if (!isQueryDefinition(pattern)) {
      callback({
        err: new NotSupportedError(
          'send() takes a query definition; send commands to an edge with command(definition, …)',
        ),
        isDisposed: true,
      });
      return () => undefined;
    }
    this.ask(pattern, packet.data as never).then(
      (response) => callback({ response, isDisposed: true }),
      (err: unknown) => callback({ err, isDisposed: true }),
    );
    return () => undefined;
  }

  protected dispatchEvent<T = unknown>(_packet: ReadPacket): Promise<T> {
    return Promise.reject(
      new NotSupportedError(
        'events are not emitted: append them to the event store (CommandHandler, Envelopes) and the outbox publishes them',
      ),
    );
  }
}
