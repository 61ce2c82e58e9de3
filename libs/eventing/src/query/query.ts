import {
  InvalidMessageError,
  type QueryDefinition,
  type QueryRequest,
  type QueryResponse,
  toIssues,
} from '@gpunet/contracts';
import {
  errors as natsErrors,
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/nats-core';
import { z } from 'zod';
import { errorCode, isRetryable, NoRespondersError, QueryFailedError, QueryTimeoutError } from '../errors';
import { Attr, AttrValue, extractFromHeaders, inSpan, injectIntoHeaders, SpanKind } from '../tracing';

/** The reply body: a result, or an error with a code the client maps to `QueryFailedError`. */
const ReplySchema = z.union([
  z.strictObject({ ok: z.literal(true), data: z.unknown() }),
  z.strictObject({
    ok: z.literal(false),
    error: z.strictObject({
      code: z.string().max(128),
      message: z.string().max(4096),
      retryable: z.boolean(),
      issues: z.array(z.strictObject({ path: z.string(), message: z.string() })).max(100),
    }),
  }),
]);

const utf8 = new TextEncoder();
const OK_HEAD = utf8.encode('{"ok":true,"data":');
const OK_TAIL = utf8.encode('}');

/**
 * A response its handler already holds as JSON: the UTF-8 bytes of a value of the query's response
 * schema. The server sends them as the reply's `data` as they are, so a handler answering with large
 * pages need not build objects only to have them stringified (for a 500 KB page that is milliseconds
 * of CPU and a heap's worth of garbage per query). With `validateResponses` (the default) the server
 * still parses and checks them before sending; the asker checks what it receives either way.
 */
export class EncodedResponse {
  /** The whole `ok` reply when `json` was written inside it (see `allocate`). */
  private reply: Uint8Array | undefined;

  constructor(readonly json: Uint8Array) {}

  /**
   * A response of `length` bytes for the handler to write into `json`, inside a buffer that already
   * holds the reply around it: the server sends that buffer without copying the response again.
   * With `into` (when it is large enough) the reply is written at its start instead of in a new
   * buffer: a handler that reuses its buffers must not touch one again until the reply has left
   * (`NatsConnection.flush()` after the reply resolves once it has).
   */
  static allocate(length: number, into?: Uint8Array): EncodedResponse {
    const size = OK_HEAD.length + length + OK_TAIL.length;
    const reply = into !== undefined && into.length >= size ? into.subarray(0, size) : new Uint8Array(size);
    reply.set(OK_HEAD);
    reply.set(OK_TAIL, OK_HEAD.length + length);
    const response = new EncodedResponse(reply.subarray(OK_HEAD.length, OK_HEAD.length + length));
    response.reply = reply;
    return response;
  }

  /** The `ok` reply around this response, in one buffer (what NATS publishes). */
  toReply(): Uint8Array {
    if (this.reply) return this.reply;
    const out = new Uint8Array(OK_HEAD.length + this.json.length + OK_TAIL.length);
    out.set(OK_HEAD);
    out.set(this.json, OK_HEAD.length);
    out.set(OK_TAIL, OK_HEAD.length + this.json.length);
    return out;
  }
}

export interface QueryServerOptions {
  readonly nc: NatsConnection;
  readonly prefix?: string;
  /** Queue group: replicas of a service share the load. Default: the query's name. */
  readonly queue?: string;
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Check each response (an `EncodedResponse` too) against the definition before sending it (default true). The asker
   * validates every reply it consumes (`askQuery`) either way; a server whose handler builds large
   * responses from already-validated state may skip this second check on its hot path, provided its
   * tests check the handler's output against the schema.
   */
  readonly validateResponses?: boolean;
}

/**
 * Answers one query over core NATS. Requests are validated against the definition; a bad request,
 * an unknown failure or a handler's typed error all come back as `ok: false` with a code — the
 * server never crashes on input and the client never waits for a timeout on an error.
 */
export const serveQuery = <Q extends QueryDefinition>(
  def: Q,
  handler: (request: z.output<Q['request']>, msg: Msg) => Promise<QueryResponse<Q> | EncodedResponse>,
  options: QueryServerOptions,
): Subscription =>
  options.nc.subscribe(def.subject(options.prefix ?? ''), {
    queue: options.queue ?? def.name,
    callback: (error, msg) => {
      if (error) {
        options.onError?.(error, `query ${def.name}: subscription error`);
        return;
      }
      void answer(def, handler, msg, options);
    },
  });

const answer = async <Q extends QueryDefinition>(
  def: Q,
  handler: (request: z.output<Q['request']>, msg: Msg) => Promise<QueryResponse<Q> | EncodedResponse>,
  msg: Msg,
  options: QueryServerOptions,
): Promise<void> => {
  const reply = (body: z.infer<typeof ReplySchema>) => {
    if (msg.reply) msg.respond(JSON.stringify(body));
  };
  await inSpan(
    `query ${def.name}`,
    {
      kind: SpanKind.SERVER,
      parent: extractFromHeaders(msg.headers),
      attributes: {
        [Attr.messagingSystem]: AttrValue.messagingSystemNats,
        [Attr.messagingDestination]: msg.subject,
      },
    },
    async () => {
      let raw: unknown;
      try {
        raw = msg.json();
      } catch {
        reply({
          ok: false,
          error: {
            code: 'INVALID_REQUEST',
            message: 'request body is not JSON',
            retryable: false,
            issues: [],
          },
        });
        return;
      }
      const request = def.request.safeParse(raw);
      if (!request.success) {
        const issues = toIssues(request.error);
        reply({
          ok: false,
          error: {
            code: 'INVALID_REQUEST',
            message: `invalid ${def.name} request`,
            retryable: false,
            issues,
          },
        });
        return;
      }
      try {
        const result = await handler(request.data as z.output<Q['request']>, msg);
        if (result instanceof EncodedResponse) {
          if (options.validateResponses !== false)
            def.response.parse(JSON.parse(new TextDecoder().decode(result.json)));
          if (msg.reply) msg.respond(result.toReply());
          return;
        }
        const data = options.validateResponses === false ? result : def.response.parse(result);
        reply({ ok: true, data });
      } catch (error) {
        options.onError?.(error, `query ${def.name} failed`);
        reply({
          ok: false,
          error: {
            code: errorCode(error).slice(0, 128),
            message: (error instanceof Error ? error.message : String(error)).slice(0, 4096),
            retryable: isRetryable(error),
            issues: [],
          },
        });
      }
    },
  ).catch((error: unknown) => options.onError?.(error, `query ${def.name}: reply failed`));
};

/**
 * Asks a query and returns the validated response. Throws `QueryTimeoutError`, `NoRespondersError`,
 * `QueryFailedError` (the server's code) or `InvalidMessageError` (a request or reply off contract).
 */
export const askQuery = async <Q extends QueryDefinition>(
  nc: NatsConnection,
  def: Q,
  request: QueryRequest<Q>,
  options: { timeoutMs?: number; prefix?: string } = {},
): Promise<QueryResponse<Q>> => {
  const parsed = def.request.safeParse(request);
  if (!parsed.success) throw new InvalidMessageError(`${def.name} request`, toIssues(parsed.error));
  return inSpan(`ask ${def.name}`, { kind: SpanKind.CLIENT }, async () => {
    const hdrs = natsHeaders();
    injectIntoHeaders(hdrs);
    let msg: Msg;
    try {
      msg = await nc.request(def.subject(options.prefix ?? ''), JSON.stringify(parsed.data), {
        timeout: options.timeoutMs ?? 5000,
        headers: hdrs,
      });
    } catch (error) {
      if (
        error instanceof natsErrors.NoRespondersError ||
        (error instanceof natsErrors.RequestError && error.isNoResponders())
      ) {
        throw new NoRespondersError(`nobody serves ${def.name}`, { cause: error });
      }
      if (error instanceof natsErrors.TimeoutError) {
        throw new QueryTimeoutError(`${def.name} got no answer within ${options.timeoutMs ?? 5000} ms`, {
          cause: error,
        });
      }
      throw error;
    }
    const reply = ReplySchema.safeParse(safeJson(msg));
    if (!reply.success) throw new InvalidMessageError(`${def.name} reply`, toIssues(reply.error));
    if (!reply.data.ok) {
      const { code, message, retryable, issues } = reply.data.error;
      throw new QueryFailedError(code, message, retryable, issues);
    }
    const data = def.response.safeParse(reply.data.data);
    if (!data.success) throw new InvalidMessageError(`${def.name} response`, toIssues(data.error, ['data']));
    return data.data as QueryResponse<Q>;
  });
};

const safeJson = (msg: Msg): unknown => {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
};
