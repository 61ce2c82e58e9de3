import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Attr } from './attributes';
import { GlobalTelemetryConflictError, TelemetryAlreadyInitializedError } from './errors';

/** Environment variables read by {@link initTelemetry}; the names are OpenTelemetry's own. */
export const OtelEnv = {
  /** Base URL of an OTLP/HTTP collector; spans go to `<url>/v1/traces`. */
  endpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  /** Full URL for traces; wins over {@link OtelEnv.endpoint}. */
  tracesEndpoint: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
} as const;

export interface TelemetryOptions {
  /** `service.name` of every span this process emits, and the tracer's name. */
  readonly serviceName: string;
  /** `service.version`; default: not set. */
  readonly serviceVersion?: string;
  /**
   * Export every span to this exporter as soon as it ends (a `SimpleSpanProcessor`). Wins over the
   * environment. Tests pass an `InMemorySpanExporter`. Default: chosen from the environment.
   */
  readonly exporter?: SpanExporter;
  /**
   * Where the OTLP endpoint variables ({@link OtelEnv}) are read. With an endpoint set, spans are
   * batched to OTLP/HTTP (JSON); with none, spans are still created and propagated (so trace ids
   * cross this service) but not exported. Default: `process.env`.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Where the spans of this process go. */
export type ExporterKind = 'custom' | 'otlp' | 'none';

export interface Telemetry {
  readonly serviceName: string;
  readonly tracer: Tracer;
  readonly exporter: ExporterKind;
  /** Exports every span that has ended and not been exported yet. */
  forceFlush(): Promise<void>;
  /**
   * Flushes and stops the tracer provider and unregisters the global tracer provider, context
   * manager and propagator, so that `initTelemetry` may be called again. Idempotent.
   */
  shutdown(): Promise<void>;
}

let active: Telemetry | undefined;

/**
 * Sets up tracing for this process and registers it globally: a `NodeTracerProvider`, an
 * `AsyncLocalStorageContextManager` (so the active span follows `await`) and the W3C TraceContext
 * propagator (so `traceparent`/`tracestate` cross NATS, see `injectTraceContext`).
 *
 * Call it once, first thing in `main.ts`, before anything creates spans. A process is one service:
 * a second call with the same `serviceName` returns the handle of the first and ignores its other
 * options; a second call with another `serviceName` throws {@link TelemetryAlreadyInitializedError}.
 * After `shutdown()` it may be called again (tests do).
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  if (active) {
    if (active.serviceName !== options.serviceName) {
      throw new TelemetryAlreadyInitializedError(active.serviceName, options.serviceName);
    }
    return active;
  }
  const { kind, processors } = spanProcessorsFor(options);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [Attr.serviceName]: options.serviceName,
      ...(options.serviceVersion === undefined ? {} : { [Attr.serviceVersion]: options.serviceVersion }),
    }),
    spanProcessors: processors,
  });
  registerGlobals(provider);

  let stopped: Promise<void> | undefined;
  const handle: Telemetry = {
    serviceName: options.serviceName,
    tracer: provider.getTracer(options.serviceName, options.serviceVersion),
    exporter: kind,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => {
      stopped ??= (async () => {
        if (active === handle) {
          active = undefined;
          // Unregister first, so that nothing starts a span on a provider that is shutting down.
          trace.disable();
          context.disable();
          propagation.disable();
        }
        await provider.shutdown();
      })();
      return stopped;
    },
  };
  active = handle;
  return handle;
}

function spanProcessorsFor(options: TelemetryOptions): { kind: ExporterKind; processors: SpanProcessor[] } {
  if (options.exporter) {
    return { kind: 'custom', processors: [new SimpleSpanProcessor(options.exporter)] };
  }
  const env = options.env ?? process.env;
  const url = otlpTracesUrl(env);
  if (url === undefined) return { kind: 'none', processors: [] };
  return { kind: 'otlp', processors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] };
}

/** The OTLP/HTTP traces URL the environment asks for, or `undefined` when it asks for none. */
export function otlpTracesUrl(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const traces = env[OtelEnv.tracesEndpoint]?.trim();
  if (traces) return traces;
  const base = env[OtelEnv.endpoint]?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function registerGlobals(provider: NodeTracerProvider): void {
  // The API refuses to replace a registered global and only logs; fail loudly instead, or spans
  // would silently go to someone else's provider. Undo only what this call registered.
  const conflict = () =>
    new GlobalTelemetryConflictError(
      'another OpenTelemetry SDK is already registered in this process; initTelemetry must be the only one',
    );
  if (!trace.setGlobalTracerProvider(provider)) throw conflict();
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(contextManager)) {
    contextManager.disable();
    trace.disable();
    throw conflict();
  }
  if (!propagation.setGlobalPropagator(new W3CTraceContextPropagator())) {
    context.disable();
    trace.disable();
    throw conflict();
  }
}
