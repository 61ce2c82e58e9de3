import type { ServiceConnection } from '@gpunet/eventing';
import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  serviceConnectionOf,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';

/** Discovery's settings, from the environment. */
export interface DiscoveryConfig extends ServiceConnection {
  /** Silence after which a provider is offline. Default 30 s. */
  readonly livenessWindowMs: number;
  /** Period of liveness sweeps; 0: only when `sweep()` is called (tests). Default 5 s. */
  readonly sweepIntervalMs: number;
  /** Period in which heartbeats are written to the projection; 0: only on `flush()`. Default 1 s. */
  readonly heartbeatFlushMs: number;
}

const EnvSchema = z.object({
  ...serviceEnvShape('discovery'),
  LIVENESS_WINDOW: envDuration('30s'),
  LIVENESS_SWEEP_INTERVAL: envDuration('5s'),
  HEARTBEAT_FLUSH_INTERVAL: envDuration('1s'),
});

/** Reads the configuration; every problem names its variable. */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): DiscoveryConfig => {
  const e = parseServiceEnv('discovery', EnvSchema, env);
  if (e.LIVENESS_WINDOW < 1000)
    throw new InvalidConfigError('discovery', [{ path: 'LIVENESS_WINDOW', message: 'at least 1s' }]);
  return {
    ...serviceConnectionOf('discovery', e),
    livenessWindowMs: e.LIVENESS_WINDOW,
    sweepIntervalMs: e.LIVENESS_SWEEP_INTERVAL,
    heartbeatFlushMs: e.HEARTBEAT_FLUSH_INTERVAL,
  };
};

export { InvalidConfigError };

/**
 * Node flags discovery runs with (`NODE_OPTIONS` or the command line; see the README's "Running").
 * `--max-semi-space-size=1`: a candidate query allocates little on the JS heap but sends a ~500 KB
 * reply, and the NATS client copies each reply into a fresh buffer. With V8's default young
 * generation no scavenge frees those buffers between queries (none in 400), so their
 * external memory alone brought a full mark-compact of the ~75 MB index every ~30–50 replies (pauses
 * of 10–35 ms plus incremental steps, on the thread that answers); with 1 MB a scavenge every few
 * queries frees them (1–2 ms, mostly): bench/discovery's p99 46–150 → 30–42 ms (with pooled reply buffers).
 */
export const DISCOVERY_NODE_FLAGS = ['--max-semi-space-size=1'] as const;

/** Those of `DISCOVERY_NODE_FLAGS` that neither the command line nor `NODE_OPTIONS` sets (to any value). */
export const missingNodeFlags = (execArgv: readonly string[], nodeOptions: string | undefined): string[] => {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map((a) => a.split('=')[0]);
  return DISCOVERY_NODE_FLAGS.filter((flag) => !given.includes(flag.split('=')[0]));
};
