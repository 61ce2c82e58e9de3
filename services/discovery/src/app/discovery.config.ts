import { toIssues, type ValidationIssue } from '@gpunet/contracts';
import { parseDurationMs } from '@gpunet/ensemble-spec';
import { readFileSync } from 'node:fs';
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

export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfigError';
  readonly code = 'INVALID_CONFIG' as const;
  constructor(readonly issues: readonly ValidationIssue[]) {
    super(`invalid discovery configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const d = parseDurationMs(text);
      if (!d.ok) {
        ctx.addIssue({ code: 'custom', message: d.reason });
        return z.NEVER;
      }
      return d.value;
    });

const EnvSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  DISCOVERY_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default('discovery'),
  NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\//, 'must be a nats:// URL')
    .default('nats://127.0.0.1:4222'),
  NATS_NKEY_SEED_FILE: z.string().optional(),
  SUBJECT_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_-]+)?$/)
    .default(''),
  LIVENESS_WINDOW: duration('30s'),
  LIVENESS_SWEEP_INTERVAL: duration('5s'),
  HEARTBEAT_FLUSH_INTERVAL: duration('1s'),
});

/** Reads the configuration; every problem names its variable. */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): DiscoveryConfig => {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new InvalidConfigError(toIssues(parsed.error));
  const e = parsed.data;
  let natsSeed: string | null = null;
  if (e.NATS_NKEY_SEED_FILE !== undefined) {
    try {
      natsSeed = readFileSync(e.NATS_NKEY_SEED_FILE, 'utf8').trim();
    } catch (error) {
      throw new InvalidConfigError([
        { path: 'NATS_NKEY_SEED_FILE', message: `cannot read: ${String(error)}` },
      ]);
    }
  }
  if (e.LIVENESS_WINDOW < 1000)
    throw new InvalidConfigError([{ path: 'LIVENESS_WINDOW', message: 'at least 1s' }]);
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
