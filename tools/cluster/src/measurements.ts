import {
  BenchmarkingStream,
  type Envelope,
  GpuBenchmarked,
  LinkMeasured,
  namespacedStream,
  type PayloadOf,
} from '@gpunet/contracts';
import { pairKey } from '@gpunet/netcoord';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/**
 * How the cluster's benchmarking runs (environment of `services/benchmarking`, see its
 * `benchmarking.config.ts`): production's schedule is for a fleet (a sweep a minute, a probe cycle
 * every 30 minutes); a cluster on one machine wants a new provider measured within seconds, so tests
 * and the demo can wait for it. Probes stay bounded and cheap on a loaded 2-core machine: small
 * transfers, fewer echoes. RTT timeouts and the same-site threshold assume one machine's links; a
 * cluster with emulated distance overrides `PROBE_RTT_TIMEOUT` and `LAN_RTT_US` through
 * `DevClusterOptions.env`.
 */
export const CLUSTER_BENCHMARKING_ENV: Readonly<Record<string, string>> = {
  BENCHMARK_SWEEP_INTERVAL: '1s',
  PROBE_INTERVAL: '5s',
  PROBE_RTT_SAMPLES: '5',
  PROBE_RTT_TIMEOUT: '500ms',
  PROBE_THROUGHPUT_MAX_BYTES: String(4 * 1024 * 1024),
  PROBE_THROUGHPUT_MAX_DURATION: '1s',
  // Namespaces on one bridge are one LAN, but a loaded 2-core machine's veth RTTs pass 1 ms (the
  // production threshold): the demo measured 0.4-1.04 ms between three of them.
  LAN_RTT_US: '5000',
};

/**
 * The ports a cluster's edges answer probes on and benchmarking probes (its defaults,
 * `PROBE_UDP_PORT`/`PROBE_TCP_PORT`). Only an edge with addresses of its own (a network namespace)
 * can listen on them: edges on loopback share the machine's addresses.
 */
export const CLUSTER_PROBE_PORTS = { udpPort: 7946, tcpPort: 7947 } as const;

export type GpuProfileEvent = PayloadOf<typeof GpuBenchmarked>;
export type LinkMeasurement = PayloadOf<typeof LinkMeasured>;

export interface Measurements {
  /** Each provider's first `gpu.benchmarked`. */
  readonly profiles: ReadonlyMap<string, GpuProfileEvent>;
  /** Every `link.measured` among the providers, in stream order. */
  readonly links: readonly LinkMeasurement[];
}

/** The providers were not all measured in time; the message says what was missing. */
export class MeasurementTimeoutError extends Error {
  override readonly name = 'MeasurementTimeoutError';
  readonly code = 'MEASUREMENT_TIMEOUT' as const;
}

/**
 * Resolves once benchmarking has published `gpu.benchmarked` for every provider and — with
 * `links` — a `link.measured` for every pair of them (either direction; with `throughput`, one
 * that carries a throughput figure), read from its JetStream stream from the start, so events
 * published before the call count. Rejects after `timeoutMs` with what is missing
 * (`MeasurementTimeoutError`).
 */
export const awaitMeasurements = async (
  nc: NatsConnection,
  prefix: string,
  providerIds: readonly string[],
  options: { readonly links: boolean; readonly throughput?: boolean; readonly timeoutMs: number },
): Promise<Measurements> => {
  const profiles = new Map<string, GpuProfileEvent>();
  const links: LinkMeasurement[] = [];
  const wanted = new Set(providerIds);
  const pairs = new Set<string>();
  if (options.links)
    for (const [i, a] of providerIds.entries())
      for (const b of providerIds.slice(i + 1)) pairs.add(pairKey(a, b));
  const measured = new Set<string>();
  const done = () => profiles.size === wanted.size && [...pairs].every((p) => measured.has(p));

  const consumer = await jetstream(nc).consumers.get(namespacedStream(BenchmarkingStream, prefix).name, {
    deliver_policy: DeliverPolicy.All,
  });
  const messages = await consumer.consume();
  const timer = setTimeout(() => messages.stop(), options.timeoutMs);
  try {
    if (!done())
      for await (const msg of messages) {
        const envelope = msg.json<Envelope>();
        if (envelope.type === GpuBenchmarked.type) {
          const data = envelope.data as GpuProfileEvent;
          if (wanted.has(data.providerId) && !profiles.has(data.providerId))
            profiles.set(data.providerId, data);
        } else if (envelope.type === LinkMeasured.type) {
          const data = envelope.data as LinkMeasurement;
          if (wanted.has(data.a) && wanted.has(data.b)) {
            links.push(data);
            if (options.throughput !== true || data.throughputBitsPerSecond !== null)
              measured.add(pairKey(data.a, data.b));
          }
        }
        if (done()) break;
      }
  } finally {
    clearTimeout(timer);
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
  if (!done()) {
    const missing = [
      ...providerIds.filter((id) => !profiles.has(id)).map((id) => `gpu.benchmarked of ${id}`),
      ...[...pairs]
        .filter((p) => !measured.has(p))
        .map(
          (p) =>
            `link.measured${options.throughput === true ? ' with throughput' : ''} of ${p.replace('|', ' ↔ ')}`,
        ),
    ];
    throw new MeasurementTimeoutError(`not measured within ${options.timeoutMs} ms: ${missing.join(', ')}`);
  }
  return { profiles, links };
};
