import { type Clock, EdgeHeartbeat, type MessageRegistry } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { recordLastSeen } from '../infra/provider.projection';
import { edgeIdOfSubject } from '@gpunet/contracts';
import type { DiscoveryMetrics } from './discovery.metrics';

/**
 * Receives heartbeats on core NATS (a queue group: replicas share them) and writes, in batches, when
 * each provider was last heard from by discovery's own clock — edges' clocks are not trusted. Also
 * knows since when heartbeats could be heard at all (start, reconnect), so that discovery's own
 * outage is never taken for the providers' silence.
 */
export class HeartbeatIngest {
  private seen = new Map<string, number>();
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private connected = false;
  private evidenceSince = Number.POSITIVE_INFINITY;

  constructor(
    private readonly deps: {
      readonly nc: NatsConnection;
      readonly db: Database;
      readonly registry: MessageRegistry;
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

  async start(): Promise<void> {
    const { nc, prefix } = this.deps;
    this.subscription = nc.subscribe(EdgeHeartbeat.filter(prefix), {
      queue: 'discovery-heartbeats',
      callback: (error, msg) => {
        if (error) return this.deps.onError?.(error, 'heartbeat subscription');
        this.receive(msg.subject, () => msg.json());
      },
    });
    await nc.flush();
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

  /** Validates one heartbeat and notes the time; invalid ones are counted and dropped. */
  receive(subject: string, body: () => unknown): void {
    let edgeId: string;
    try {
      const envelope = this.deps.registry.parse(body());
      if (envelope.type !== EdgeHeartbeat.type) throw new Error('not a heartbeat');
      edgeId = (envelope.data as { edgeId: string }).edgeId;
    } catch {
      this.deps.metrics.heartbeats.inc({ outcome: 'invalid' });
      return;
    }
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
    this.subscription?.unsubscribe();
    await this.flush().catch((e: unknown) => this.deps.onError?.(e, 'heartbeat flush at stop'));
  }
}
