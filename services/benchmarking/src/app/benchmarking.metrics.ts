import { defineCounter, defineHistogram, type Registry } from '@gpunet/telemetry';
import type { Counter, Histogram } from 'prom-client';

export interface BenchmarkingMetrics {
  /**
   * Commands sent to edges, by kind (benchmark, probe, challenge, challenge-open) and the edge's answer
   * (accepted, declined, unanswered; for challenges committed, declined, no-answer, malformed, reply).
   */
  readonly commands: Counter<'kind' | 'answer'>;
  /** Signed edge reports consumed, by kind and result (applied, ignored, or the reason they were refused). */
  readonly reports: Counter<'kind' | 'result'>;
  /** Claim verifications and GPU challenges, by verdict (verified, mismatched, challenge-passed, challenge-failed). */
  readonly verdicts: Counter<'verdict'>;
  /** Link measurements recorded, however measured (direct probes, jobs' overlays). */
  readonly linksMeasured: Counter;
  /** Of those, from jobs' overlay path reports (one per direction of a direct pair). */
  readonly overlayLinksMeasured: Counter;
  /** Jobs' overlay path reports, by result (applied, held for the job's launch, resolved at the launch, dropped expired). */
  readonly overlayReports: Counter<'result'>;
  /** Pairs of overlay path reports that yielded no link, by reason (`OverlayPairSkip`). */
  readonly overlayPairsSkipped: Counter<'reason'>;
  readonly probeCycleSeconds: Histogram;
}

const cache = new WeakMap<Registry, BenchmarkingMetrics>();

export const benchmarkingMetrics = (registry: Registry): BenchmarkingMetrics => {
  const known = cache.get(registry);
  if (known) return known;
  const metrics: BenchmarkingMetrics = {
    commands: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'edge_commands',
      help: 'Benchmark and probe commands sent to edges, by kind and answer.',
      labelNames: ['kind', 'answer'],
    }),
    reports: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'edge_reports',
      help: 'Signed edge reports consumed, by kind and result.',
      labelNames: ['kind', 'result'],
    }),
    verdicts: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'claim_verdicts',
      help: 'Claim verifications and GPU challenges, by verdict.',
      labelNames: ['verdict'],
    }),
    linksMeasured: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'links_measured',
      help: 'Link measurements recorded (direct probes and job overlays).',
    }),
    overlayLinksMeasured: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'overlay_links_measured',
      help: "Link measurements recorded from jobs' overlay path reports.",
    }),
    overlayReports: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'overlay_reports',
      help: "Jobs' overlay path reports consumed, by result.",
      labelNames: ['result'],
    }),
    overlayPairsSkipped: defineCounter(registry, {
      subsystem: 'benchmarking',
      name: 'overlay_pairs_skipped',
      help: 'Overlay path report pairs that yielded no link, by reason.',
      labelNames: ['reason'],
    }),
    probeCycleSeconds: defineHistogram(registry, {
      subsystem: 'benchmarking',
      name: 'probe_cycle',
      unit: 'seconds',
      help: 'Duration of one network probe cycle.',
      buckets: [1, 5, 15, 30, 60, 120, 300, 600],
    }),
  };
  cache.set(registry, metrics);
  return metrics;
};
