import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  readNatsSeed,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';

/** Discovery's settings, from the environment. */
export interface DiscoveryConfig {
  readonly databaseUrl: string;
  /** The service's own Postgres schema. Default `discovery`. */
  readonly schema: string;
  readonly natsUrl: string;
  /** The service's NATS user nkey seed (`SU…`); null: no credentials (development server). */
  readonly natsSeed: string | null;
  /** Subject/stream namespace (tests); default ''. */
  readonly prefix: string;
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
  const natsSeed = readNatsSeed('discovery', e.NATS_NKEY_SEED_FILE);
  if (e.LIVENESS_WINDOW < 1000)
    throw new InvalidConfigError('discovery', [{ path: 'LIVENESS_WINDOW', message: 'at least 1s' }]);
  return {
    databaseUrl: e.DATABASE_URL,
    schema: e.DISCOVERY_SCHEMA,
    natsUrl: e.NATS_URL,
    natsSeed,
    prefix: e.SUBJECT_PREFIX,
    livenessWindowMs: e.LIVENESS_WINDOW,
    sweepIntervalMs: e.LIVENESS_SWEEP_INTERVAL,
    heartbeatFlushMs: e.HEARTBEAT_FLUSH_INTERVAL,
  };
};

export { InvalidConfigError };
