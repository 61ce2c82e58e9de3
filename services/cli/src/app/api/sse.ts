import { ExitCode } from '../command';
import type { CliIo } from '../io';
import type { GatewayClient, Query } from './client';
import { CliError, isCliError } from './errors';

/** One dispatched server-sent event. */
export interface SseEvent {
  /** `event:` field; `message` when the event named none. */
  readonly event: string;
  readonly data: string;
  /** The last event id seen on the stream so far (it persists across events, as the spec says). */
  readonly id: string | undefined;
}

/**
 * An incremental parser for `text/event-stream` (WHATWG HTML §9.2.6): feed it decoded text in
 * chunks of any size; lines end with CRLF, LF or CR (a CR at a chunk's end waits for the next
 * chunk to tell whether an LF follows); `:` lines are comments; `data:` lines join with LF; a blank
 * line dispatches; an event with no data is not dispatched; an `id` containing NUL is ignored.
 */
export class SseParser {
  private buffer = '';
  private pendingCr = false;
  private first = true;
  private data: string[] = [];
  private event = '';
  private lastId: string | undefined;
  /** `retry:` (ms), when the server sent one. */
  retryMs: number | undefined;

  get lastEventId(): string | undefined {
    return this.lastId;
  }

  feed(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let buf = this.buffer + text;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 === buf.length) this.pendingCr = true;
        else if (buf.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    buf = buf.slice(start);
    this.buffer = buf;
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0)
        out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
  }
}

export interface StreamOptions {
  /** Reconnects in a row without receiving anything before giving up (exit 5). Default 5. */
  readonly maxRetries?: number;
  /** First reconnect delay; doubles up to 8 s (the server's `retry:` wins). Default 500 ms. */
  readonly retryDelayMs?: number;
  readonly signal?: AbortSignal;
  /** Which events end the stream (the gateway's `end`); the reader returns after yielding it. */
  readonly isTerminal?: (e: SseEvent) => boolean;
  /** Resume after this id (the first connection too). */
  readonly lastEventId?: string;
  /** A stream that ends without a terminal event is finished (no reconnect): e.g. logs without follow. */
  readonly endIsFinal?: boolean;
}

/**
 * The events of one stream, across reconnects: when the connection drops before a terminal event it
 * reconnects with `Last-Event-ID` after a growing delay, at most `maxRetries` times in a row (a
 * connection that delivers an event resets the count). An error response (401, 404 …) is not retried.
 */
export async function* readEventStream(
  client: GatewayClient,
  io: CliIo,
  path: string,
  query: Query,
  options: StreamOptions = {},
): AsyncGenerator<SseEvent> {
  const maxRetries = options.maxRetries ?? 5;
  let delay = options.retryDelayMs ?? 500;
  let lastId = options.lastEventId;
  let failures = 0;
  let lastReason: string;
  for (;;) {
    if (options.signal?.aborted) return;
    const controller = new AbortController();
    const abort = () => controller.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    const parser = new SseParser();
    try {
      const res = await client.stream(path, query, lastId, controller.signal);
      if (!res.body) throw new Error('no body');
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const e of parser.feed(decoder.decode(chunk, { stream: true }))) {
          failures = 0;
          if (e.id !== undefined) lastId = e.id;
          yield e;
          if (options.isTerminal?.(e)) return;
        }
      }
      if (options.endIsFinal) return;
      lastReason = 'the server closed the stream';
    } catch (e) {
      if (options.signal?.aborted) return;
      if (isCliError(e) && e.exitCode !== ExitCode.Unreachable) throw e;
      lastReason = e instanceof Error ? e.message.trim() : String(e);
    } finally {
      options.signal?.removeEventListener('abort', abort);
      controller.abort();
    }
    failures++;
    if (failures > maxRetries)
      throw new CliError(
        ExitCode.Unreachable,
        `gpunet: the event stream ${path} dropped ${failures} times in a row (${lastReason}); giving up\n`,
      );
    await io.sleep(parser.retryMs ?? delay);
    delay = Math.min(delay * 2, 8_000);
  }
}
