import { randomUUID } from 'node:crypto';
import { ExitCode } from '../command';
import type { CliIo } from '../io';
import type { Target } from './config';
import { CliError } from './errors';
import { problemError, toProblem } from './problem';
import { type ApiSchemaName, type ApiSchemas, checkResponse } from './responses';

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly query?: Query;
  /** A string body is sent as is with `contentType`; anything else as JSON. */
  readonly body?: unknown;
  readonly contentType?: string;
  /** POSTs and DELETEs always carry one (generated when not given), so a retried request is never done twice. */
  readonly idempotencyKey?: string;
  /** The file a spec came from, to locate field errors (`file:line:column`). */
  readonly file?: string;
}

const USER_AGENT = 'gpunet-cli/1';

/** Why fetch failed, in words: `connect ECONNREFUSED 127.0.0.1:9`, `getaddrinfo ENOTFOUND …`. */
const networkReason = (e: unknown): string => {
  if (e instanceof Error && e.name === 'TimeoutError') return 'no answer in time';
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message;
  return e instanceof Error ? e.message : String(e);
};

/**
 * The gateway's REST API over fetch: bearer key, problem+json errors turned into `CliError`s with
 * the exit code of their class (auth 3, not found 4, refused 1), connection failures exit 5.
 */
export class GatewayClient {
  constructor(
    private readonly target: Target,
    private readonly io: CliIo,
    private readonly timeoutMs = 30_000,
  ) {}

  get gateway(): string {
    return this.target.gateway;
  }

  url(path: string, query: Query = {}): string {
    const url = new URL(`${this.target.gateway}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.target.apiKey}`, 'user-agent': USER_AGENT, ...extra };
  }

  /** Sends a request; a fetch failure is exit 5, an error response a `CliError` with its problem. */
  async send(
    method: string,
    path: string,
    options: RequestOptions = {},
    signal?: AbortSignal,
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    if (method === 'POST' || method === 'DELETE')
      headers['idempotency-key'] = options.idempotencyKey ?? `cli-${randomUUID()}`;
    let res: Response;
    try {
      res = await this.io.fetch(this.url(path, options.query), {
        method,
        headers: this.headers(headers),
        ...(body !== undefined ? { body } : {}),
        signal: signal ?? AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new CliError(
        ExitCode.Unreachable,
        `gpunet: cannot reach the gateway at ${this.target.gateway}: ${networkReason(e)}\n`,
      );
    }
    if (!res.ok) throw problemError(toProblem(res.status, await res.text().catch(() => '')), options.file);
    return res;
  }

  /**
   * A JSON request whose answer must match `schema`, the name of one of the OpenAPI document's
   * schemas; anything else is exit 1 naming the first field at fault.
   */
  async json<N extends ApiSchemaName>(
    method: string,
    path: string,
    schema: N,
    options: RequestOptions = {},
  ): Promise<ApiSchemas[N]> {
    const res = await this.send(method, path, options);
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const checked = checkResponse(schema, body);
    if (!checked.ok) {
      const issue = checked.issue;
      throw new CliError(
        ExitCode.Failed,
        `gpunet: the gateway's answer to ${method} ${path} is not what this CLI understands${
          issue ? ` (${issue.path || 'the body'}: ${issue.message})` : ''
        }; is the gateway of another version?\n`,
      );
    }
    return checked.value;
  }

  /** Opens an event stream (`text/event-stream`), resuming after `lastEventId` when given. */
  async stream(
    path: string,
    query: Query,
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await this.io.fetch(this.url(path, query), {
        headers: this.headers({
          accept: 'text/event-stream',
          ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}),
        }),
        signal,
      });
    } catch (e) {
      if (signal.aborted) throw e;
      throw new CliError(
        ExitCode.Unreachable,
        `gpunet: cannot reach the gateway at ${this.target.gateway}: ${networkReason(e)}\n`,
      );
    }
    if (!res.ok) throw problemError(toProblem(res.status, await res.text().catch(() => '')));
    return res;
  }
}
