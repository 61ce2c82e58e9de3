import type { Envelope } from '@gpunet/contracts';
import { backoffMs } from '../domain/backoff';
import type { EdgeLogger } from './logger';

export interface OutboxItem {
  readonly subject: string;
  readonly envelope: Envelope;
  /** A later item with the same key replaces this one while both wait (periodic `running` statuses). */
  readonly supersedeKey: string | null;
  /** Called once JetStream acknowledged it. */
  readonly onAck?: () => void;
}

export interface JetStreamOutboxOptions {
  /** Publishes to JetStream; resolves on the acknowledgement, rejects on timeout or error. */
  readonly publish: (subject: string, payload: string, msgId: string) => Promise<void>;
  readonly log: EdgeLogger;
  readonly random: () => number;
}

/**
 * Messages the edge must deliver to JetStream (rank statuses): published in order, each retried with
 * backoff until acknowledged (`Nats-Msg-Id` = event id, so a retry after a lost ack is deduplicated
 * by the stream). A NATS outage delays them; nothing is dropped except items superseded by a newer
 * one of the same key.
 */
export class JetStreamOutbox {
  private pending: OutboxItem[] = [];
  private flushing: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: JetStreamOutboxOptions) {}

  get size(): number {
    return this.pending.length;
  }

  push(item: OutboxItem): void {
    if (item.supersedeKey !== null)
      this.pending = this.pending.filter(
        // The item being published (first) stays: it may already be on its way.
        (p, i) => i === 0 || p.supersedeKey !== item.supersedeKey,
      );
    this.pending.push(item);
    this.kick();
  }

  /** Retries now with a fresh backoff (after a reconnect). */
  retryNow(): void {
    this.failures = 0;
    clearTimeout(this.retryTimer);
    this.kick();
  }

  /** Resolves once everything queued was acknowledged (or the outbox was closed). */
  async drained(): Promise<void> {
    while (this.pending.length > 0 && !this.closed) await new Promise((r) => setTimeout(r, 10));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private kick(): void {
    if (this.closed) return;
    if (this.flushing) {
      this.again = true;
      return;
    }
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0 && !this.closed) {
      const next = this.pending[0]!;
      try {
        await this.options.publish(next.subject, JSON.stringify(next.envelope), next.envelope.eventId);
        if (this.pending[0] === next) this.pending.shift();
        this.failures = 0;
        next.onAck?.();
      } catch (error) {
        this.failures += 1;
        const delay = backoffMs(this.failures, this.options.random());
        this.options.log('warn', 'rank status not acknowledged; retrying', {
          type: next.envelope.type,
          delayMs: delay,
          error: String(error),
        });
        clearTimeout(this.retryTimer);
        if (!this.closed) this.retryTimer = setTimeout(() => this.kick(), delay);
        return;
      }
    }
  }
}
