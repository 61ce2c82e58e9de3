import { defineCounter, defineHistogram, type Registry } from '@gpunet/telemetry';
import type { Counter, Histogram } from 'prom-client';

export interface DiscoveryMetrics {
  /** Signed edge reports refused (and dead-lettered), by reason. */
  readonly reportsRejected: Counter<'reason'>;
  /**
   * Heartbeats received, by outcome (`accepted`, `subject-mismatch`); those off contract are the
   * transport's `gpunet_subscription_rejected_total{subscription="discovery-heartbeats"}`.
   */
  readonly heartbeats: Counter<'outcome'>;
  /** Liveness transitions decided by sweeps. */
  readonly livenessTransitions: Counter<'to'>;
  readonly candidateQuerySeconds: Histogram;
}

const cache = new WeakMap<Registry, DiscoveryMetrics>();

export const discoveryMetrics = (registry: Registry): DiscoveryMetrics => {
  const known = cache.get(registry);
  if (known) return known;
  const metrics: DiscoveryMetrics = {
    reportsRejected: defineCounter(registry, {
      subsystem: 'discovery',
      name: 'edge_reports_rejected',
      help: 'Edge reports refused because their signature or identity did not verify.',
      labelNames: ['reason'],
    }),
    heartbeats: defineCounter(registry, {
      subsystem: 'discovery',
      name: 'heartbeats',
      help: 'Edge heartbeats received, by outcome.',
      labelNames: ['outcome'],
    }),
    livenessTransitions: defineCounter(registry, {
      subsystem: 'discovery',
      name: 'liveness_transitions',
      help: 'Providers marked online or offline by liveness sweeps.',
      labelNames: ['to'],
    }),
    candidateQuerySeconds: defineHistogram(registry, {
      subsystem: 'discovery',
      name: 'candidate_query',
      unit: 'seconds',
      help: 'Time to answer one candidate query page.',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 1],
    }),
  };
  cache.set(registry, metrics);
  return metrics;
};
