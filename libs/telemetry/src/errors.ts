/** Base class of every telemetry error; `code` is what callers branch on, never the message text. */
export abstract class TelemetryError extends Error {
  abstract readonly code: string;
}

/**
 * `initTelemetry` was called a second time with a different service name. A process is one service:
 * the global tracer provider cannot describe two, so the second caller is told instead of being
 * silently given the first one's tracer.
 */
export class TelemetryAlreadyInitializedError extends TelemetryError {
  readonly code = 'TELEMETRY_ALREADY_INITIALIZED' as const;
  override readonly name = 'TelemetryAlreadyInitializedError';
  constructor(
    readonly activeService: string,
    readonly requestedService: string,
  ) {
    super(
      `telemetry is already initialized for service ${activeService}; cannot initialize it for ${requestedService}`,
    );
  }
}

/** A metric name or unit does not follow the gpunet conventions (`gpunet_<subsystem>_<name>_<unit>`). */
export class InvalidMetricNameError extends TelemetryError {
  readonly code = 'INVALID_METRIC_NAME' as const;
  override readonly name = 'InvalidMetricNameError';
}

export const isTelemetryError = (e: unknown): e is TelemetryError => e instanceof TelemetryError;

/** Something other than `initTelemetry` registered a global OpenTelemetry provider first. */
export class GlobalTelemetryConflictError extends TelemetryError {
  readonly code = 'GLOBAL_TELEMETRY_CONFLICT' as const;
  override readonly name = 'GlobalTelemetryConflictError';
}
