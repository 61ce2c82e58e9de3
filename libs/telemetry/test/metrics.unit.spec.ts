import { afterEach, describe, expect, it } from 'vitest';
import {
  createMetricsRegistry,
  defineCounter,
  defineGauge,
  defineHistogram,
  InvalidMetricNameError,
  type MetricsServer,
  metricName,
  startMetricsServer,
} from '../src';

describe('createMetricsRegistry', () => {
  it('labels every series with the service', async () => {
    const registry = createMetricsRegistry({ service: 'metrics-test', defaultMetrics: false });
    defineCounter(registry, {
      subsystem: 'eventing',
      name: 'messages_handled',
      help: 'Messages handled.',
    }).inc();
    expect(await registry.metrics()).toContain(
      'gpunet_eventing_messages_handled_total{service="metrics-test"} 1',
    );
  });

  it('collects Node process metrics by default, on its own registry only', async () => {
    const withDefaults = createMetricsRegistry({ service: 'metrics-test' });
    const without = createMetricsRegistry({ service: 'metrics-test', defaultMetrics: false });
    expect(await withDefaults.metrics()).toMatch(
      /^process_cpu_user_seconds_total\{service="metrics-test"\} /m,
    );
    expect(await without.metrics()).toBe('\n');
  });
});

describe('metricName', () => {
  it.each([
    ['eventing', 'handle_duration', 'seconds', 'gpunet_eventing_handle_duration_seconds'],
    ['scheduler', 'queue_depth', undefined, 'gpunet_scheduler_queue_depth'],
    ['edge', 'free', 'gpus', 'gpunet_edge_free_gpus'],
  ] as const)('%s / %s / %s → %s', (subsystem, name, unit, expected) => {
    expect(metricName(subsystem, name, unit)).toBe(expected);
  });

  it.each([
    ['camel case', 'eventing', 'handleDuration'],
    ['a dash', 'eventing', 'handle-duration'],
    ['a leading digit', '2pc', 'commits'],
    ['the prefix in the subsystem', 'gpunet', 'jobs'],
    ['a _total of its own', 'eventing', 'messages_total'],
    ['a unit of its own', 'eventing', 'handle_milliseconds'],
    ['an empty part', 'eventing', ''],
    ['double underscores', 'eventing', 'a__b'],
  ])('rejects %s', (_name, subsystem, name) => {
    expect(() => metricName(subsystem, name)).toThrow(InvalidMetricNameError);
  });
});

describe('define helpers', () => {
  it('name counters with _total, histograms and gauges with their unit, with typed labels', async () => {
    const registry = createMetricsRegistry({ service: 'metrics-test', defaultMetrics: false });
    const handled = defineCounter(registry, {
      subsystem: 'eventing',
      name: 'messages_settled',
      help: 'Messages settled by outcome.',
      labelNames: ['consumer', 'outcome'],
    });
    handled.inc({ consumer: 'scheduler-jobs', outcome: 'ack' });
    defineHistogram(registry, {
      subsystem: 'eventing',
      name: 'handle_duration',
      unit: 'seconds',
      help: 'Handler duration.',
      buckets: [0.1, 1],
    }).observe(0.5);
    defineGauge(registry, { subsystem: 'scheduler', name: 'queue_depth', help: 'Jobs waiting.' }).set(3);
    const text = await registry.metrics();
    expect(text).toContain(
      'gpunet_eventing_messages_settled_total{consumer="scheduler-jobs",outcome="ack",service="metrics-test"} 1',
    );
    expect(text).toContain('gpunet_eventing_handle_duration_seconds_bucket{le="1",service="metrics-test"} 1');
    expect(text).toContain(
      'gpunet_eventing_handle_duration_seconds_bucket{le="0.1",service="metrics-test"} 0',
    );
    expect(text).toContain('gpunet_scheduler_queue_depth{service="metrics-test"} 3');
  });
});

describe('startMetricsServer', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async (health?: () => boolean | Promise<boolean>) => {
    const registry = createMetricsRegistry({ service: 'metrics-server-test', defaultMetrics: false });
    defineGauge(registry, { subsystem: 'test', name: 'up', help: 'Always 1.' }).set(1);
    server = await startMetricsServer({ port: 0, host: '127.0.0.1', registry, ...(health && { health }) });
    return `http://127.0.0.1:${server.port}`;
  };

  it('binds an ephemeral port and serves Prometheus text at /metrics', async () => {
    const base = await start();
    expect(server?.port).toBeGreaterThan(0);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('gpunet_test_up{service="metrics-server-test"} 1');
  });

  it('answers /healthz with 200 when healthy and 503 when not or when the check throws', async () => {
    let healthy = true;
    const base = await start(() => healthy);
    const ok = await fetch(`${base}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ok' });
    healthy = false;
    const down = await fetch(`${base}/healthz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable' });
  });

  it('answers 503 when the health check rejects', async () => {
    const base = await start(() => Promise.reject(new Error('db down')));
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
  });

  it.each([
    ['an unknown path', '/nope', 'GET', 404],
    ['a query string on /metrics', '/metrics?x=1', 'GET', 200],
    ['HEAD /metrics', '/metrics', 'HEAD', 200],
    ['POST /metrics', '/metrics', 'POST', 405],
  ])('answers %s with %i', async (_name, path, method, status) => {
    const base = await start();
    const res = await fetch(`${base}${path}`, { method });
    expect(res.status).toBe(status);
    await res.arrayBuffer();
  });

  it('stops listening on close, and close is idempotent', async () => {
    const base = await start();
    await (await fetch(`${base}/metrics`)).text();
    await server?.close();
    await server?.close();
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });

  it('rejects when the port is taken', async () => {
    await start();
    const registry = createMetricsRegistry({ service: 'metrics-server-test', defaultMetrics: false });
    await expect(
      startMetricsServer({ port: server!.port, host: '127.0.0.1', registry }),
    ).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });
});
