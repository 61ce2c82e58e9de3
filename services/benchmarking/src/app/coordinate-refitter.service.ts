import { NetworkCoordinatesRefitted, newEventId, originOf, streamIdOf } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, type Tx } from '@gpunet/eventing';
import { mulberry32, seedOf } from '@gpunet/netcoord';
import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { changedCoordinates, estimateNetwork, type HostCoordinate } from '../domain/network-estimate';
import { liveLinks, loadCoordinates, lockCoordinates, writeCoordinates } from '../infra/links.repository';
import { activeProviderIds } from '../infra/providers.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import { BENCHMARKING_CONFIG } from './benchmarking.tokens';

/** The most hosts one `network.coordinates.refitted` carries; a larger change is several events. */
const HOSTS_PER_EVENT = 5000;

/**
 * Refits the hosts' coordinates after links were recorded (`kick`), coalescing the changes that
 * arrive while a fit runs: one fit for many reports. A fit starts from the previous coordinates and
 * uses every live link; a shutdown waits for the fit in flight. The hosts whose coordinate or
 * same-site group changed go out as `network.coordinates.refitted` (through the outbox, in the
 * fit's transaction), which is how the scheduler learns them: nothing asks benchmarking while
 * placing.
 */
@Injectable()
export class CoordinateRefitter implements BeforeApplicationShutdown {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
  ) {}

  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.refit().catch((e: unknown) => this.eventing.onError(e, 'coordinate refit'));
      } while (this.again);
    })().finally(() => (this.running = undefined));
  }

  /** Settles when no refit is running or queued. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.idle();
  }

  /**
   * One fit, in its own transaction; one at a time per schema (concurrent fits would start from
   * stale coordinates). Returns how many hosts have coordinates.
   */
  refit(): Promise<number> {
    return this.eventing.db.transaction(async (tx) => {
      await lockCoordinates(tx);
      const now = this.eventing.clock.now().toISOString();
      const links = await liveLinks(tx, now);
      const hosts = await activeProviderIds(tx);
      const previous = await loadCoordinates(tx);
      const coordinates = estimateNetwork(hosts, links, {
        rng: mulberry32(seedOf(`coordinates:${now}`)),
        previous,
        lanRttUs: this.config.lanRttUs,
      });
      await writeCoordinates(tx, coordinates, now);
      await this.announce(tx, changedCoordinates(previous, coordinates), now);
      return coordinates.length;
    });
  }

  /**
   * A fit is a fact, not a decision (nothing in the stream decides what may follow): stamped by
   * `eventing.envelopes`, appended at any version, each fit the start of its own chain (it
   * coalesces many link reports, so no one of them caused it).
   */
  private async announce(tx: Tx, changed: readonly HostCoordinate[], fittedAt: string): Promise<void> {
    if (changed.length === 0) return;
    const expiresAt = new Date(Date.parse(fittedAt) + this.config.linkTtlMs).toISOString();
    const cause = originOf(newEventId());
    const events = [];
    for (let i = 0; i < changed.length; i += HOSTS_PER_EVENT) {
      const hosts = changed
        .slice(i, i + HOSTS_PER_EVENT)
        .map(({ hostId, x, y, height, error, siteId }) => ({ hostId, x, y, height, error, siteId }));
      events.push(
        this.eventing.envelopes.event(NetworkCoordinatesRefitted, { hosts, fittedAt, expiresAt }, cause),
      );
    }
    await this.eventing.store.append(streamIdOf('benchmarking', 'coordinates'), events, {
      expectedVersion: 'any',
      tx,
    });
  }
}
