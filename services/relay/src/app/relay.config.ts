import { toIssues, type ValidationIssue } from '@gpunet/contracts';
import { z } from 'zod';

/** The relay's settings, from the environment. */
export interface RelayConfig {
  /** `RELAY_ID`: the relay's name in the deployment (edges are told it). */
  readonly relayId: string;
  /** `RELAY_HOST` (default `0.0.0.0`) and `RELAY_PORT` (default 8443): the framed protocol. */
  readonly host: string;
  readonly port: number;
  /** `RELAY_STUN_PORTS`: comma-separated UDP ports for STUN (default `3478,3479`; two tell symmetric NATs apart). */
  readonly stunPorts: readonly number[];
  /** `RELAY_VERIFY_KEYS`: comma-separated ed25519 public keys (base64, 32 bytes) of the control plane. */
  readonly verifyKeys: readonly string[];
  /** `RELAY_JOB_RATE_BYTES_PER_SEC`: default budget of one job on this relay; 0 (default) = unlimited. */
  readonly jobRateBytesPerSec: number;
  /** `RELAY_JOB_BURST_BYTES`: burst above the rate (default 4 MiB). */
  readonly jobBurstBytes: number;
  /** `RELAY_TLS_CERT` / `RELAY_TLS_KEY`: PEM files; both set = TLS. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
}

export class InvalidRelayConfigError extends Error {
  override readonly name = 'InvalidRelayConfigError';
  readonly code = 'INVALID_CONFIG' as const;
  constructor(readonly issues: readonly ValidationIssue[]) {
    super(`invalid relay configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

const port = z.coerce.number().int().min(0).max(65_535);
const list = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const schema = z
  .strictObject({
    relayId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ -'),
    host: z.string().min(1),
    port,
    stunPorts: z.array(port).max(4),
    verifyKeys: z
      .array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/, 'must be an ed25519 public key: 32 bytes, base64'))
      .min(1, 'at least one key is needed: the relay admits no one otherwise'),
    jobRateBytesPerSec: z.coerce.number().int().min(0),
    jobBurstBytes: z.coerce.number().int().min(0),
    tlsCertFile: z.string().min(1).nullable(),
    tlsKeyFile: z.string().min(1).nullable(),
  })
  .refine((c) => (c.tlsCertFile === null) === (c.tlsKeyFile === null), {
    message: 'RELAY_TLS_CERT and RELAY_TLS_KEY go together',
    path: ['tlsCertFile'],
  });

/** Reads and checks the relay's settings; throws `InvalidRelayConfigError` listing every bad one. */
export const relayConfigFromEnv = (env: Readonly<Record<string, string | undefined>>): RelayConfig => {
  const result = schema.safeParse({
    relayId: env['RELAY_ID'] ?? 'relay-1',
    host: env['RELAY_HOST'] ?? '0.0.0.0',
    port: env['RELAY_PORT'] ?? '8443',
    stunPorts: list(env['RELAY_STUN_PORTS'] ?? '3478,3479'),
    verifyKeys: list(env['RELAY_VERIFY_KEYS']),
    jobRateBytesPerSec: env['RELAY_JOB_RATE_BYTES_PER_SEC'] ?? '0',
    jobBurstBytes: env['RELAY_JOB_BURST_BYTES'] ?? String(4 * 1024 * 1024),
    tlsCertFile: env['RELAY_TLS_CERT'] || null,
    tlsKeyFile: env['RELAY_TLS_KEY'] || null,
  });
  if (!result.success) throw new InvalidRelayConfigError(toIssues(result.error));
  return result.data;
};
