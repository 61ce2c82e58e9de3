import type { FindCandidates, QueryResponse } from '@gpunet/contracts';
import { type Database, EncodedResponse } from '@gpunet/eventing';
import type { NatsConnection } from '@nats-io/nats-core';
import { CandidateIndex } from '../domain/candidate-index';
import type { CandidateRequest } from '../domain/candidate.filter';
import { loadIndexedProviders } from '../infra/candidate.repository';
import { ReplyBufferPool } from './reply-buffer.pool';

/**
 * The most bytes of candidates one reply carries. NATS refuses messages over its `max_payload`
 * (1 MiB by default); a page stops short of this and continues at `nextCursor`. The index counts a
 * page's bytes exactly (it used to estimate them generously, which kept pages of 1,000 providers
 * near 510 KB under a 768 KiB limit): 512 KiB keeps the pages the scheduler gets the size they were.
 */
export const DEFAULT_MAX_REPLY_BYTES = 512 * 1024;

/**
 * Answers the candidate query from an in-memory mirror of the projection: the scheduler asks often
 * and wants answers in milliseconds; Postgres holds the truth. The mirror is loaded at start and a
 * provider is re-read whenever its aggregate changes — at once after this replica's own commits,
 * and for every replica from the `discovery.provider.…` events the outbox relay publishes
 * (`CandidatesHandler`: replicas converge whoever decided the change). A reconnect to NATS re-reads
 * everything, in case events passed meanwhile.
 */
export class CandidateCache {
  readonly index = new CandidateIndex();
  private pending = new Set<string>();
  private refreshing: Promise<void> | undefined;
  /** The buffers replies are written into (reused once sent). */
  readonly replyBuffers: ReplyBufferPool;

  constructor(
    private readonly deps: {
      readonly db: Pick<Database, 'query' | 'schema'>;
      readonly nc: NatsConnection;
      readonly maxReplyBytes?: number;
      readonly onError?: (error: unknown, context: string) => void;
    },
  ) {
    // Room for a full page and the reply around it (`{"ok":true,"data":…}`).
    this.replyBuffers = new ReplyBufferPool({
      bytes: (deps.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES) + 4096,
      sent: () => deps.nc.flush(),
    });
  }

  /** Loads the index, and loads it again whenever NATS reconnects (events may have passed meanwhile). */
  async start(): Promise<void> {
    const { nc } = this.deps;
    await this.reload();
    void (async () => {
      for await (const s of nc.status())
        if (s.type === 'reconnect')
          await this.reload().catch((e: unknown) => this.deps.onError?.(e, 'candidate cache reload'));
    })().catch(() => undefined);
  }

  /** Reads the whole projection again. */
  async reload(): Promise<void> {
    const { providers } = await loadIndexedProviders(this.deps.db);
    this.index.replaceAll(providers);
  }

  /** Re-reads these providers (batched: refreshes asked for meanwhile share the next read). */
  refresh(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.pending.add(id);
    this.refreshing ??= (async () => {
      try {
        while (this.pending.size > 0) {
          const batch = [...this.pending];
          this.pending.clear();
          const { providers } = await loadIndexedProviders(this.deps.db, batch);
          for (const p of providers) this.index.upsert(p);
        }
      } catch (error) {
        this.deps.onError?.(error, 'candidate cache refresh');
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  query(request: CandidateRequest, nowMs: number): QueryResponse<typeof FindCandidates> {
    return this.index.query(request, nowMs, this.deps.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES);
  }

  /**
   * The same page as the JSON the reply carries, written straight into the reply's buffer: a page is
   * ~500 KB, and every buffer of that size a query leaves behind brings V8's next full collection of
   * the ~75 MB heap nearer (bench/discovery), so the buffers are reused once NATS has sent the
   * reply. The reply must be handed to NATS in this turn of the event loop (`serveQuery` does).
   */
  queryEncoded(request: CandidateRequest, nowMs: number): EncodedResponse {
    let response: EncodedResponse | undefined;
    this.index.queryJson(
      request,
      nowMs,
      this.deps.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES,
      // The buffer also holds the reply around the page (`{"ok":true,"data":` … `}`).
      (length) => (response = EncodedResponse.allocate(length, this.replyBuffers.lend(length + 64))).json,
    );
    return response!;
  }
}
