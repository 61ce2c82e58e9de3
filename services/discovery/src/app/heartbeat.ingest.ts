import { type Clock, edgeIdOfSubject } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { NatsConnection } from '@nats-io/nats-core';
import { recordLastSeen } from '../infra/provider.projection';
import type { DiscoveryMetrics } from './discovery.metrics';

/**
 * Takes heartbeats (received on core NATS by `HeartbeatsHandler`, a queue group: replicas share
 * them) and writes, in batches, when each provider was last heard from by discovery's own clock —
 * edges' clocks are not trusted. Also
 * knows since when heartbeats could be heard at all (start, reconnect), so that discovery's own
 * outage is never taken for the providers' silence.
 */
export class HeartbeatIngest {
  private seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private connected = false;
  private evidenceSince = Number.POSITIVE_INFINITY;

  constructor(
    private readonly deps: {
      readonly nc: NatsConnection;
      readonly db: Database;
      readonly clock: Clock;
      readonly metrics: DiscoveryMetrics;
      readonly prefix: string;
      readonly flushIntervalMs: number;
      readonly onError?: (error: unknown, context: string) => void;
    },
  ) {}

  /** Whether heartbeats can arrive now. */
  get listening(): boolean {
    return this.connected && !this.deps.nc.isClosed();
  }

  /** Since when heartbeats could be heard without interruption (ms); +∞ while disconnected. */
  get evidenceSinceMs(): number {
    return this.listening ? this.evidenceSince : Number.POSITIVE_INFINITY;
  }

  /**
   * Starts listening for the connection's state and flushing. The subscription itself is the
   * transport's (`HeartbeatsHandler`), made as the service starts serving, right after this.
   */
  start(): void {
    const { nc } = this.deps;
    this.connected = true;
    this.evidenceSince = this.deps.clock.now().getTime();
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.connected = false;
        if (s.type === 'reconnect') {
          this.connected = true;
          this.evidenceSince = this.deps.clock.now().getTime();
        }
      }
    })().catch(() => undefined);
    if (this.deps.flushIntervalMs > 0)
      this.timer = setInterval(() => {
        this.flush().catch((e: unknown) => this.deps.onError?.(e, 'heartbeat flush'));
      }, this.deps.flushIntervalMs);
  }

  /**
   * Notes that `edgeId` was heard now, if the subject it came on is its own; the envelope was
   * validated before (a heartbeat off contract never gets here: the transport counts it).
   */
  receive(subject: string, edgeId: string): void {
    if (edgeIdOfSubject(subject, this.deps.prefix) !== edgeId) {
      this.deps.metrics.heartbeats.inc({ outcome: 'subject-mismatch' });
      return;
    }
    this.deps.metrics.heartbeats.inc({ outcome: 'accepted' });
    this.seen.set(edgeId, this.deps.clock.now().getTime());
  }

  /** Heartbeats received and not yet written. */
  get buffered(): number {
    return this.seen.size;
  }

  /** Writes the buffered last-seen times. */
  async flush(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    try {
      await recordLastSeen(this.deps.db, batch);
    } catch (error) {
      for (const [id, t] of batch) if ((this.seen.get(id) ?? 0) < t) this.seen.set(id, t);
      throw error;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch((e: unknown) => this.deps.onError?.(e, 'heartbeat flush at stop'));
  }
}
