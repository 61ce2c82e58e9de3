import { hostname } from 'node:os';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import {
  type DestinationStream,
  type Level,
  type Logger,
  type LoggerOptions as PinoOptions,
  pino,
} from 'pino';
import { redact, redactString } from './redact';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** `service` field of every line; use the same name as `initTelemetry({ serviceName })`. */
  readonly service: string;
  /** `version` field of every line; default: not set. */
  readonly version?: string;
  /** Lowest level written; default `info`. */
  readonly level?: Level;
  /** Where JSON lines go; default: stdout. Tests pass an in-memory stream. */
  readonly destination?: DestinationStream;
}

/** The ids of the active span, named as in the OpenTelemetry log data model; `{}` outside a span. */
export function activeTraceFields(): { trace_id?: string; span_id?: string; trace_flags?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return {};
  return {
    trace_id: sc.traceId,
    span_id: sc.spanId,
    trace_flags: sc.traceFlags.toString(16).padStart(2, '0'),
  };
}

/**
 * A pino logger that writes one JSON object per line with `level` as a label, an ISO `time`,
 * `service`, and the active span's `trace_id`/`span_id`, so a log line leads to its trace.
 *
 * Secrets never reach the output: every field (at any depth, in child bindings too) and every
 * message string passes through `redact`, which blanks values under secret-looking keys
 * (`password`, `token`, `apiKey`, `authorization`, `privateKey`, `seed`, …) and strips credentials
 * from URLs (`postgres://user:[REDACTED]@db/gpunet`), bearer tokens and NATS nkey seeds.
 */
export function createLogger(options: LoggerOptions): Logger {
  const base = {
    service: options.service,
    ...(options.version === undefined ? {} : { version: options.version }),
    pid: process.pid,
    hostname: hostname(),
  };
  const settings: PinoOptions = {
    level: options.level ?? 'info',
    base,
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => activeTraceFields(),
    // `formatters.log` has already turned errors into redacted plain objects; serializing those
    // again would only rename their `type` to `Object`.
    serializers: { err: (err: unknown) => (err instanceof Error ? redact(err) : err) },
    formatters: {
      level: (label) => ({ level: label }),
      bindings: (bindings) => redact(bindings) as Record<string, unknown>,
      log: (object) => redact(object) as Record<string, unknown>,
    },
    hooks: {
      // Messages and interpolation arguments are written verbatim by pino, outside `formatters.log`.
      logMethod(args, method) {
        const [first, ...rest] = args as unknown[];
        if (first instanceof Error) {
          // pino would take the message from the unredacted error; hand it a redacted copy instead.
          const msg = typeof rest[0] === 'string' ? rest.shift() : first.message;
          method.apply(this, [{ err: redact(first) }, ...[msg, ...rest].map(redactArg)] as Parameters<
            typeof method
          >);
          return;
        }
        method.apply(this, args.map(redactArg) as Parameters<typeof method>);
      },
    },
  };
  const logger = options.destination ? pino(settings, options.destination) : pino(settings);
  return redactingBindings(logger);
}

/**
 * pino applies `formatters.bindings` to the root logger's base only; child bindings and
 * `setBindings` are written verbatim. Redact them on the way in. Children inherit these methods
 * from the root (pino creates them with `Object.create`), so grandchildren are covered too.
 */
function redactingBindings(logger: Logger): Logger {
  // Both are called below with `this` bound to whichever logger (root, child, grandchild) is used.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const { child, setBindings } = logger;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redact(bindings) as typeof bindings, childOptions);
  } as Logger['child'];
  logger.setBindings = function (this: Logger, bindings) {
    setBindings.call(this, redact(bindings) as typeof bindings);
  };
  return logger;
}

const redactArg = (arg: unknown): unknown => (typeof arg === 'string' ? redactString(arg) : arg);
