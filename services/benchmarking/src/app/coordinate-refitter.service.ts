import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { mulberry32, seedOf } from '@gpunet/netcoord';
import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { estimateNetwork } from '../domain/network-estimate';
import { liveLinks, loadCoordinates, lockCoordinates, writeCoordinates } from '../infra/links.repository';
import { activeProviderIds } from '../infra/providers.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import { BENCHMARKING_CONFIG } from './benchmarking.tokens';

/**
 * Refits the hosts' coordinates after links were recorded (`kick`), coalescing the changes that
 * arrive while a fit runs: one fit for many reports. A fit starts from the previous coordinates and
 * uses every live link; a shutdown waits for the fit in flight.
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
      const coordinates = estimateNetwork(hosts, links, {
        rng: mulberry32(seedOf(`coordinates:${now}`)),
        previous: await loadCoordinates(tx),
        lanRttUs: this.config.lanRttUs,
      });
      await writeCoordinates(tx, coordinates, now);
      return coordinates.length;
    });
  }
}
