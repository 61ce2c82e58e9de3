import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The eventing pipeline's Prometheus metrics; one set per registry. */
export interface EventingMetrics {
  readonly published: Counter;
  readonly relayFailures: Counter;
  readonly outboxLag: Gauge;
  readonly handled: Counter<'consumer'>;
  readonly duplicates: Counter<'consumer'>;
  readonly handlerFailures: Counter<'consumer' | 'code'>;
  readonly deadLettered: Counter<'consumer' | 'code'>;
  readonly batchSeconds: Histogram<'consumer'>;
  readonly subscriptionRejected: Counter<'subscription' | 'reason'>;
  readonly subscriptionFailures: Counter<'subscription'>;
}

const cache = new WeakMap<Registry, EventingMetrics>();

export const eventingMetrics = (registry: Registry): EventingMetrics => {
  const existing = cache.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const metrics: EventingMetrics = {
    published: new Counter({
      name: 'gpunet_outbox_published_total',
      help: 'Outbox messages acknowledged by JetStream.',
      registers,
    }),
    relayFailures: new Counter({
      name: 'gpunet_outbox_relay_failures_total',
      help: 'Outbox relay rounds that failed and were retried.',
      registers,
    }),
    outboxLag: new Gauge({
      name: 'gpunet_outbox_lag_messages',
      help: 'Messages the outbox relay found waiting to be published at its last round (at most its batch size).',
      registers,
    }),
    handled: new Counter({
      name: 'gpunet_consumer_handled_total',
      help: 'Messages handled and committed.',
      labelNames: ['consumer'],
      registers,
    }),
    duplicates: new Counter({
      name: 'gpunet_consumer_duplicates_total',
      help: 'Redelivered messages skipped by the inbox.',
      labelNames: ['consumer'],
      registers,
    }),
    handlerFailures: new Counter({
      name: 'gpunet_consumer_handler_failures_total',
      help: 'Handler failures (each attempt).',
      labelNames: ['consumer', 'code'],
      registers,
    }),
    deadLettered: new Counter({
      name: 'gpunet_consumer_dead_lettered_total',
      help: 'Messages given up on and sent to the dead-letter stream.',
      labelNames: ['consumer', 'code'],
      registers,
    }),
    batchSeconds: new Histogram({
      name: 'gpunet_consumer_batch_seconds',
      help: 'Time to handle and commit one batch.',
      labelNames: ['consumer'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    subscriptionRejected: new Counter({
      name: 'gpunet_subscription_rejected_total',
      help: 'Core-NATS messages dropped before their handler: not JSON, off contract, or of a type the subscription does not take.',
      labelNames: ['subscription', 'reason'],
      registers,
    }),
    subscriptionFailures: new Counter({
      name: 'gpunet_subscription_handler_failures_total',
      help: 'Core-NATS messages whose handler failed (reported, not retried).',
      labelNames: ['subscription'],
      registers,
    }),
  };
  cache.set(registry, metrics);
  return metrics;
};
