import type { ServiceConnection } from '@gpunet/eventing';
import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  serviceConnectionOf,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';
import { parseApiKey } from './api-keys';

/** The gateway's settings, from the environment. */
export interface GatewayConfig extends ServiceConnection {
  /** HTTP listen address and port. Default 0.0.0.0:8080. */
  readonly host: string;
  readonly port: number;
  /** An API key created at start (admin, read and submit scopes) for `adminTenant`; never logged. */
  readonly adminKey: string | undefined;
  readonly adminTenant: string;
  /** The subnet of jobs whose spec names none and whose tenant has no default. Default: none. */
  readonly defaultSubnet: string | null;
  /** Largest request body, bytes. Default 1 MiB. */
  readonly bodyLimitBytes: number;
  /** Requests per second per API key (token bucket) and the bucket's size. Defaults 20 and 40. */
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  /** How often open event streams (SSE) look for new events. Default 250 ms. */
  readonly ssePollMs: number;
  /** Comment lines on open event streams keep proxies from closing them. Default 15 s. */
  readonly sseHeartbeatMs: number;
  /** Open SSE streams at most (events and logs together); more are refused with 503. Default 1000. */
  readonly maxStreams: number;
  /** How long the gateway waits for another service's query. Default 5 s. */
  readonly queryTimeoutMs: number;
  /**
   * How long an authenticated API key is trusted without reading it again (`ApiKeyStoreOptions`):
   * the longest a key revoked on another replica keeps working here. 0: every request. Default 5 s.
   */
  readonly keyCacheTtlMs: number;
}

const EnvSchema = z.object({
  ...serviceEnvShape('gateway'),
  GATEWAY_HOST: z.string().min(1).default('0.0.0.0'),
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  GATEWAY_ADMIN_KEY: z
    .string()
    .optional()
    .refine((k) => k === undefined || parseApiKey(k) !== null, 'must be a key gpn_<12 id chars>_<secret>'),
  GATEWAY_ADMIN_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .default('operator'),
  GATEWAY_DEFAULT_SUBNET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .optional(),
  GATEWAY_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  GATEWAY_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().max(1_000_000).default(20),
  GATEWAY_RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(40),
  GATEWAY_SSE_POLL: envDuration('250ms'),
  GATEWAY_SSE_HEARTBEAT: envDuration('15s'),
  GATEWAY_MAX_STREAMS: z.coerce.number().int().min(1).default(1000),
  GATEWAY_QUERY_TIMEOUT: envDuration('5s'),
  GATEWAY_KEY_CACHE_TTL: envDuration('5s').refine((ms) => ms <= 300_000, 'at most 5m'),
});

export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): GatewayConfig => {
  const e = parseServiceEnv('gateway', EnvSchema, env);
  return {
    ...serviceConnectionOf('gateway', e),
    host: e.GATEWAY_HOST,
    port: e.GATEWAY_PORT,
    adminKey: e.GATEWAY_ADMIN_KEY,
    adminTenant: e.GATEWAY_ADMIN_TENANT,
    defaultSubnet: e.GATEWAY_DEFAULT_SUBNET ?? null,
    bodyLimitBytes: e.GATEWAY_BODY_LIMIT_BYTES,
    rateLimitPerSecond: e.GATEWAY_RATE_LIMIT_PER_SECOND,
    rateLimitBurst: e.GATEWAY_RATE_LIMIT_BURST,
    ssePollMs: e.GATEWAY_SSE_POLL,
    sseHeartbeatMs: e.GATEWAY_SSE_HEARTBEAT,
    maxStreams: e.GATEWAY_MAX_STREAMS,
    queryTimeoutMs: e.GATEWAY_QUERY_TIMEOUT,
    keyCacheTtlMs: e.GATEWAY_KEY_CACHE_TTL,
  };
};

export { InvalidConfigError };
