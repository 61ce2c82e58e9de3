export { Attr, type AttrKey, type AttrName, AttrValue, type SpanAttributes } from './attributes';
export {
  GlobalTelemetryConflictError,
  InvalidMetricNameError,
  isTelemetryError,
  TelemetryAlreadyInitializedError,
  TelemetryError,
} from './errors';
export { activeTraceFields, createLogger, type Logger, type LoggerOptions } from './logger';
export {
  createMetricsRegistry,
  defineCounter,
  defineGauge,
  defineHistogram,
  DURATION_BUCKETS_SECONDS,
  METRIC_PREFIX,
  metricName,
  type MetricUnit,
  type MetricsRegistryOptions,
  SERVICE_LABEL,
} from './metrics';
export {
  type MetricsServer,
  type MetricsServerOptions,
  MetricsPaths,
  startMetricsServer,
} from './metrics-server';
export {
  contextFromRecord,
  extractTraceContext,
  injectTraceContext,
  traceContextToRecord,
  type TraceContextRecord,
  TraceHeaders,
} from './propagation';
export { REDACTED, redact, redactString } from './redact';
export { recordFailure, setAttributes, withSpan, type WithSpanOptions } from './span';
export {
  type ExporterKind,
  initTelemetry,
  OtelEnv,
  otlpTracesUrl,
  type Telemetry,
  type TelemetryOptions,
} from './tracing';

// The OpenTelemetry API types services need, so that they import telemetry from one place.
export { type Context, type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
export type { Registry } from 'prom-client';
