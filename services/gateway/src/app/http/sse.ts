import { JobLogsStream, namespacedStream, prefixSubject, RankLogChunk } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { DeliverPolicy } from '@nats-io/jetstream';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UpstreamUnavailableError } from '../../domain/gateway.errors';
import { TERMINAL_STATUSES } from '../../domain/job-view';
import type { JobsProjection } from '../../infra/jobs.projection';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, JOBS_PROJECTION, STREAMS } from '../gateway.tokens';

/**
 * Server-sent events, bounded: at most `maxStreams` open at once (503 beyond), a comment line every
 * heartbeat so that proxies keep the connection, and every timer and subscription released when the
 * client goes or the gateway shuts down.
 */
export class StreamRegistry {
  private readonly open = new Set<() => void>();
  constructor(
    private readonly max: number,
    /** Told the number of open streams whenever it changes (a gauge). */
    private readonly onChange: (open: number) => void = () => undefined,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Reserves a slot; the returned release is idempotent. */
  acquire(close: () => void): () => void {
    if (this.open.size >= this.max)
      throw new UpstreamUnavailableError(`too many open event streams (${this.max}); retry later`);
    this.open.add(close);
    this.onChange(this.open.size);
    return () => {
      if (this.open.delete(close)) this.onChange(this.open.size);
    };
  }

  closeAll(): void {
    for (const close of [...this.open]) close();
  }
}

const startStream = (reply: FastifyReply): void => {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  reply.raw.write(': stream open\n\n');
};

const frame = (event: string, data: unknown, id?: number): string =>
  `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A job's events and its ranks' logs as server-sent events. */
@Injectable()
export class JobStreams {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(JOBS_PROJECTION) private readonly projection: JobsProjection,
    @Inject(STREAMS) private readonly streams: StreamRegistry,
  ) {}

  /**
   * The job's history (from `afterSeq`), then new events as the read model records them, until the
   * job has ended and everything was sent. Polls the read model: it is the one place events of four
   * streams meet in order per job.
   */
  events(request: FastifyRequest, reply: FastifyReply, jobId: string, afterSeq: number): void {
    const { projection } = this;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sse = this.open(request, reply, () => {
      if (timer) clearTimeout(timer);
    });
    const { close } = sse;
    let last = afterSeq;
    const poll = async (): Promise<void> => {
      if (sse.closed()) return;
      try {
        const entries = await projection.history(jobId, last);
        for (const e of entries) {
          if (sse.closed()) return;
          reply.raw.write(frame(e.type, { ...e, seq: undefined }, e.seq));
          last = e.seq;
        }
        if (entries.length === 0) {
          const status = await projection.status(jobId);
          // Ended and nothing left: a late event (job.settled) may still come; the client can resume.
          if (status === undefined || TERMINAL_STATUSES.has(status)) {
            const more = await projection.history(jobId, last, 1);
            if (more.length === 0) {
              reply.raw.write(frame('end', { jobId, status: status ?? null }));
              close();
              return;
            }
          }
        }
      } catch (error) {
        request.log.warn({ err: error }, 'job event stream failed');
        reply.raw.write(frame('error', { message: 'the event stream failed; reconnect with Last-Event-ID' }));
        close();
        return;
      }
      if (!sse.closed()) timer = setTimeout(() => void poll(), this.config.ssePollMs);
    };
    void poll();
  }

  /**
   * The ranks' output from JOB_LOGS through an ordered consumer on the job's subjects: what is
   * stored first, then (with `follow`) new chunks until the client goes. Each chunk's SSE `id` is its
   * JOB_LOGS sequence, so a reconnect with `Last-Event-ID` (or `after`) starts at the next stored
   * message.
   */
  async logs(
    request: FastifyRequest,
    reply: FastifyReply,
    jobId: string,
    options: { follow: boolean; rank?: number; stream?: 'stdout' | 'stderr'; afterSeq?: number },
  ): Promise<void> {
    const { eventing } = this;
    const { name } = namespacedStream(JobLogsStream, eventing.prefix);
    const subject = prefixSubject(eventing.prefix, `edge.*.log.${jobId}.v1`);
    const consumer = await eventing.nats.js.consumers.get(name, {
      // One subject as a string: servers before 2.10 know only `filter_subject`.
      filter_subjects: subject,
      ...(options.afterSeq !== undefined
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: options.afterSeq + 1 }
        : { deliver_policy: DeliverPolicy.All }),
    });
    let messages: { stop(): void } | undefined;
    const sse = this.open(request, reply, () => {
      messages?.stop();
      void consumer.delete().catch(() => undefined);
    });
    const { close } = sse;
    try {
      const info = await consumer.info();
      if (!options.follow && info.num_pending === 0) {
        reply.raw.write(frame('end', { jobId }));
        close();
        return;
      }
      const iterator = await consumer.consume();
      messages = iterator;
      for await (const m of iterator) {
        if (sse.closed()) break;
        try {
          const envelope = eventing.registry.parse(m.json());
          if (envelope.type === RankLogChunk.type) {
            const chunk = envelope.data as { rank: number; stream: string };
            if (
              (options.rank === undefined || chunk.rank === options.rank) &&
              (options.stream === undefined || chunk.stream === options.stream)
            )
              reply.raw.write(frame('log', envelope.data, m.seq));
          }
        } catch {
          // An edge's malformed chunk is skipped; the rest of the log still streams.
        }
        if (!options.follow && m.info.pending === 0) {
          reply.raw.write(frame('end', { jobId }));
          break;
        }
      }
    } catch (error) {
      request.log.warn({ err: error }, 'job log stream failed');
    } finally {
      close();
    }
  }

  /**
   * Starts an event stream: takes a slot (503 when none is left), sends the head, keeps it alive
   * with heartbeats; `close` (idempotent: the client going, the end, the gateway stopping) releases
   * all of it and runs `cleanup`.
   */
  private open(
    request: FastifyRequest,
    reply: FastifyReply,
    cleanup: () => void,
  ): { readonly close: () => void; readonly closed: () => boolean } {
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      cleanup();
      release();
      if (!reply.raw.writableEnded) reply.raw.end();
    };
    const release = this.streams.acquire(close);
    startStream(reply);
    const heartbeat = setInterval(() => reply.raw.write(': keep-alive\n\n'), this.config.sseHeartbeatMs);
    heartbeat.unref();
    request.raw.on('close', close);
    return { close, closed: () => closed };
  }
}
