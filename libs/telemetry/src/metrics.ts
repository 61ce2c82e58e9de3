import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { InvalidMetricNameError } from './errors';

/** Every gpunet metric starts with this; Node's default process metrics keep their standard names. */
export const METRIC_PREFIX = 'gpunet_';

/** Label every series of a registry carries. */
export const SERVICE_LABEL = 'service';

export interface MetricsRegistryOptions {
  /** Value of the `service` label on every series. */
  readonly service: string;
  /** Collect Node's process metrics (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`, …); default true. */
  readonly defaultMetrics?: boolean;
}

/**
 * A fresh registry (never prom-client's global one, so tests and several registries in one process
 * do not collide) whose series all carry `service="<service>"`.
 */
export function createMetricsRegistry(options: MetricsRegistryOptions): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ [SERVICE_LABEL]: options.service });
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Base units, as Prometheus naming asks: seconds not milliseconds, bytes not megabytes. */
export type MetricUnit = 'seconds' | 'bytes' | 'ratio' | 'gpus' | 'messages';

const PART = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const UNIT_SUFFIX = /_(total|seconds|milliseconds|bytes|ratio|count|sum|bucket)$/;

/**
 * `gpunet_<subsystem>_<name>[_<unit>]`, e.g. `metricName('eventing', 'handle_duration', 'seconds')`
 * is `gpunet_eventing_handle_duration_seconds`. Parts are lower snake case; the name carries no
 * unit or `_total` of its own (the helpers below add them), so every metric is named one way.
 */
export function metricName(subsystem: string, name: string, unit?: MetricUnit): string {
  for (const [what, part] of [
    ['subsystem', subsystem],
    ['name', name],
  ] as const) {
    if (!PART.test(part))
      throw new InvalidMetricNameError(`metric ${what} "${part}" must be lower snake case`);
  }
  if (subsystem === 'gpunet')
    throw new InvalidMetricNameError('the gpunet_ prefix is added, not part of the subsystem');
  if (UNIT_SUFFIX.test(name)) {
    throw new InvalidMetricNameError(
      `metric name "${name}" must not end in a unit or _total; pass the unit instead`,
    );
  }
  return `${METRIC_PREFIX}${subsystem}_${name}${unit === undefined ? '' : `_${unit}`}`;
}

interface MetricSpec<L extends string> {
  readonly subsystem: string;
  readonly name: string;
  /** What one unit of the series means, for people reading `/metrics`. */
  readonly help: string;
  readonly labelNames?: readonly L[];
}

/** Histogram buckets for durations of message handling and requests, in seconds (1 ms … 30 s). */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** A counter named `gpunet_<subsystem>_<name>_total`, registered on `registry`. */
export function defineCounter<L extends string = never>(registry: Registry, spec: MetricSpec<L>): Counter<L> {
  return new Counter<L>({
    name: `${metricName(spec.subsystem, spec.name)}_total`,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
  });
}

/** A gauge named `gpunet_<subsystem>_<name>[_<unit>]`, registered on `registry`. */
export function defineGauge<L extends string = never>(
  registry: Registry,
  spec: MetricSpec<L> & { readonly unit?: MetricUnit },
): Gauge<L> {
  return new Gauge<L>({
    name: metricName(spec.subsystem, spec.name, spec.unit),
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
  });
}

/** A histogram named `gpunet_<subsystem>_<name>_<unit>`; default buckets {@link DURATION_BUCKETS_SECONDS}. */
export function defineHistogram<L extends string = never>(
  registry: Registry,
  spec: MetricSpec<L> & { readonly unit: MetricUnit; readonly buckets?: readonly number[] },
): Histogram<L> {
  return new Histogram<L>({
    name: metricName(spec.subsystem, spec.name, spec.unit),
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    buckets: [...(spec.buckets ?? DURATION_BUCKETS_SECONDS)],
    registers: [registry],
  });
}
