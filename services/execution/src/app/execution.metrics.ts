import { defineCounter, defineGauge, type Registry } from '@gpunet/telemetry';
import type { Counter, Gauge } from 'prom-client';

export interface ExecutionMetrics {
  /** Rank statuses received, by verdict (`accepted`, `usage-only`, `wrong-edge`, …). */
  readonly rankStatuses: Counter<'verdict'>;
  /** Commands sent to edges, by command and outcome (`ok`, `rejected`, `error`). */
  readonly edgeCommands: Counter<'command' | 'outcome'>;
  /** Jobs that ended, by outcome and reason code. */
  readonly jobsEnded: Counter<'outcome' | 'code'>;
  /** Jobs the process manager is driving now. */
  readonly activeJobs: Gauge;
}

/** Injection token of the service's `ExecutionMetrics`. */
export const EXECUTION_METRICS = Symbol('gpunet.execution.metrics');

const cache = new WeakMap<Registry, ExecutionMetrics>();

export const executionMetrics = (registry: Registry): ExecutionMetrics => {
  const known = cache.get(registry);
  if (known) return known;
  const metrics: ExecutionMetrics = {
    rankStatuses: defineCounter(registry, {
      subsystem: 'execution',
      name: 'rank_statuses',
      help: 'Rank statuses consumed from the edges, by verdict (statuses from the wrong edge or attempt are ignored).',
      labelNames: ['verdict'],
    }),
    edgeCommands: defineCounter(registry, {
      subsystem: 'execution',
      name: 'edge_commands',
      help: 'Start, stop and release commands sent to edges, by outcome.',
      labelNames: ['command', 'outcome'],
    }),
    jobsEnded: defineCounter(registry, {
      subsystem: 'execution',
      name: 'jobs_ended',
      help: 'Jobs completed, failed or cancelled, by reason code.',
      labelNames: ['outcome', 'code'],
    }),
    activeJobs: defineGauge(registry, {
      subsystem: 'execution',
      name: 'active_jobs',
      help: 'Jobs being launched, run or stopped by this replica.',
    }),
  };
  cache.set(registry, metrics);
  return metrics;
};
