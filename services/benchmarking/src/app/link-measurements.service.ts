import {
  type Causation,
  type EdgeLinksProbed,
  LinkMeasured,
  type PayloadOf,
  streamIdOf,
} from '@gpunet/contracts';
import { EVENTING, type EventingRuntime, type Tx } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import { type LinkMeasurement, linkMeasurements } from '../domain/links';
import { upsertLinks } from '../infra/links.repository';
import { markProbeReported } from '../infra/probe-requests.repository';
import type { BenchmarkingConfig } from './benchmarking.config';
import type { BenchmarkingMetrics } from './benchmarking.metrics';
import { BENCHMARKING_CONFIG, BENCHMARKING_METRICS } from './benchmarking.tokens';
import { CoordinateRefitter } from './coordinate-refitter.service';

/**
 * Measured links, however they were measured (an edge's probe report, a job's overlay paths):
 * `link.measured` events on the stream of each direction's sender (`benchmarking-links-<a>`,
 * published through the outbox) and the links projection, in the caller's transaction; once it
 * committed, the coordinates are refitted.
 *
 * A measurement is a fact, not a decision: nothing in a links stream decides what may follow, so the
 * events are stamped by `eventing.envelopes` and appended at any version — replicas recording links
 * of one sender at once never conflict.
 */
@Injectable()
export class LinkMeasurements {
  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(BENCHMARKING_CONFIG) private readonly config: BenchmarkingConfig,
    @Inject(BENCHMARKING_METRICS) private readonly metrics: BenchmarkingMetrics,
    @Inject(CoordinateRefitter) private readonly refitter: CoordinateRefitter,
  ) {}

  /**
   * Applies an edge's (verified) link report: only for a probe request benchmarking sent to that
   * edge, only for the peers it named. Returns whether it answered such a request.
   */
  async recordProbeReport(
    report: PayloadOf<typeof EdgeLinksProbed>,
    cause: Causation,
    tx: Tx,
  ): Promise<boolean> {
    const now = this.eventing.clock.now().toISOString();
    const peers = await markProbeReported(tx, report.requestId, report.edgeId, now);
    if (peers === null) return false;
    const asked = new Set(peers);
    const links = linkMeasurements(
      report.edgeId,
      report.results.filter((r) => asked.has(r.peerId)),
      {
        measuredAtMs: Date.parse(report.probedAt),
        ttlMs: this.config.linkTtlMs,
        lanRttUs: this.config.lanRttUs,
      },
    );
    await this.record(tx, links, cause);
    return true;
  }

  /** Records `links` in `tx`, caused by `cause`. */
  async record(tx: Tx, links: readonly LinkMeasurement[], cause: Causation): Promise<void> {
    if (links.length === 0) return;
    const { envelopes, store } = this.eventing;
    const bySender = new Map<string, LinkMeasurement[]>();
    for (const l of links) bySender.set(l.a, [...(bySender.get(l.a) ?? []), l]);
    for (const [sender, measured] of bySender)
      await store.append(
        streamIdOf('benchmarking-links', sender),
        measured.map((l) => envelopes.event(LinkMeasured, l, cause)),
        { expectedVersion: 'any', tx },
      );
    // Relayed figures are the relay's detour, not the hosts' network: published for the scheduler,
    // kept out of the links projection (and so out of coordinates and `benchmarking.network`).
    const direct = links.filter((l) => l.relayed !== true);
    await upsertLinks(tx, direct);
    tx.onCommit(() => {
      this.metrics.linksMeasured.inc(links.length);
      if (direct.length > 0) this.refitter.kick();
    });
  }
}
