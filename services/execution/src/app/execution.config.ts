import type { ServiceConnection } from '@gpunet/eventing';
import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  serviceConnectionOf,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { type OverlayRelay, OverlayRelaySchema } from '@gpunet/contracts';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ExecutionPolicy } from '../domain/job-execution.decider';

/** Execution's settings, from the environment (durations as `30s`, `5m`). */
export interface ExecutionConfig extends ServiceConnection {
  /** Deadlines of the job aggregate (start barrier, heartbeat, usage period, stop wait). */
  readonly policy: ExecutionPolicy;
  /** How often deadlines are checked and unanswered commands re-sent. Default 1 s. */
  readonly tickMs: number;
  /** How long an edge has to answer a command. Default 5 s. */
  readonly edgeTimeoutMs: number;
  /** SIGTERM → SIGKILL grace the edges give stopped ranks. Default 10 s. */
  readonly stopGraceMs: number;
  /** Where a job's ranks find each other: the hosts' own network, or a job overlay. */
  readonly network: ExecutionNetworkConfig;
}

export type ExecutionNetworkConfig =
  | { readonly kind: 'host' }
  | {
      readonly kind: 'overlay';
      /** Relays every job may use (ranked per job); empty: direct paths only. */
      readonly relays: readonly OverlayRelay[];
      /** ed25519 seed (32 bytes, base64) signing relay admission tokens; null without relays. */
      readonly signingKey: string | null;
    };

const EnvSchema = z.object({
  ...serviceEnvShape('execution'),
  EXECUTION_START_BARRIER: envDuration('5m'),
  EXECUTION_HEARTBEAT_TIMEOUT: envDuration('2m'),
  EXECUTION_USAGE_PERIOD: envDuration('1m'),
  /** Seconds an edge's usage for a rank may exceed execution's observation before it is disputed. */
  EXECUTION_USAGE_TOLERANCE_SECONDS: z.coerce.number().min(0).max(3600).default(5),
  /** The same, as a percent of the observed seconds (the larger of both applies). */
  EXECUTION_USAGE_TOLERANCE_PERCENT: z.coerce.number().min(0).max(100).default(5),
  EXECUTION_STOP_WAIT: envDuration('1m'),
  EXECUTION_TICK: envDuration('1s'),
  EXECUTION_EDGE_TIMEOUT: envDuration('5s'),
  EXECUTION_STOP_GRACE: envDuration('10s'),
  EXECUTION_NETWORK: z.enum(['host', 'overlay']).default('host'),
  EXECUTION_OVERLAY_RELAYS: z.string().max(65_536).optional(),
  EXECUTION_OVERLAY_ADMISSION_KEY_FILE: z.string().min(1).optional(),
});

/**
 * `EXECUTION_OVERLAY_RELAYS`: a JSON array of relays (`OverlayRelay`: relayId, host, port, stunPorts,
 * tls?, servername?) or the short form `id=host:port[/stun1+stun2],…` (plain TCP, STUN on the given
 * UDP ports, default 3478+3479).
 */
export const parseOverlayRelays = (
  text: string,
): { ok: true; relays: OverlayRelay[] } | { ok: false; message: string } => {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, relays: [] };
  let raw: unknown;
  if (trimmed.startsWith('[')) {
    try {
      raw = JSON.parse(trimmed);
    } catch (error) {
      return { ok: false, message: `not JSON: ${(error as Error).message}` };
    }
  } else {
    const items: unknown[] = [];
    for (const part of trimmed.split(',')) {
      const m = /^([^=\s]+)=([^:/\s]+):(\d{1,5})(?:\/(\d{1,5}(?:\+\d{1,5})*))?$/.exec(part.trim());
      if (!m)
        return { ok: false, message: `${JSON.stringify(part.slice(0, 64))} is not id=host:port[/stun+stun]` };
      items.push({
        relayId: m[1],
        host: m[2],
        port: Number(m[3]),
        stunPorts: (m[4] ?? '3478+3479').split('+').map(Number),
      });
    }
    raw = items;
  }
  const parsed = z.array(OverlayRelaySchema).max(64).safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      message: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    };
  const ids = parsed.data.map((r) => r.relayId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) return { ok: false, message: `relay ${twice} is listed twice` };
  return { ok: true, relays: parsed.data };
};

const SIGNING_KEY = /^[A-Za-z0-9+/]{43}=$/;

const networkFromEnv = (e: z.infer<typeof EnvSchema>): ExecutionNetworkConfig => {
  if (e.EXECUTION_NETWORK === 'host') return { kind: 'host' };
  const relays = parseOverlayRelays(e.EXECUTION_OVERLAY_RELAYS ?? '');
  if (!relays.ok)
    throw new InvalidConfigError('execution', [
      { path: 'EXECUTION_OVERLAY_RELAYS', message: relays.message },
    ]);
  const keyFile = e.EXECUTION_OVERLAY_ADMISSION_KEY_FILE;
  if (keyFile === undefined) {
    if (relays.relays.length > 0)
      throw new InvalidConfigError('execution', [
        {
          path: 'EXECUTION_OVERLAY_ADMISSION_KEY_FILE',
          message: 'required with relays (it signs the admission tokens the relays check)',
        },
      ]);
    return { kind: 'overlay', relays: [], signingKey: null };
  }
  let key: string;
  try {
    key = readFileSync(keyFile, 'utf8').trim();
  } catch (error) {
    throw new InvalidConfigError('execution', [
      { path: 'EXECUTION_OVERLAY_ADMISSION_KEY_FILE', message: `cannot read: ${String(error)}` },
    ]);
  }
  if (!SIGNING_KEY.test(key))
    throw new InvalidConfigError('execution', [
      {
        path: 'EXECUTION_OVERLAY_ADMISSION_KEY_FILE',
        message: 'must hold an ed25519 seed: 32 bytes in base64 (generateAdmissionKeys().signingKey)',
      },
    ]);
  return { kind: 'overlay', relays: relays.relays, signingKey: key };
};

export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): ExecutionConfig => {
  const e = parseServiceEnv('execution', EnvSchema, env);
  if (e.EXECUTION_STOP_GRACE > 300_000)
    throw new InvalidConfigError('execution', [
      { path: 'EXECUTION_STOP_GRACE', message: 'must be at most 5m (the edges cap the grace period)' },
    ]);
  if (e.EXECUTION_STOP_WAIT < e.EXECUTION_STOP_GRACE)
    throw new InvalidConfigError('execution', [
      {
        path: 'EXECUTION_STOP_WAIT',
        message: 'must be at least EXECUTION_STOP_GRACE (ranks get that long to exit)',
      },
    ]);
  return {
    ...serviceConnectionOf('execution', e),
    policy: {
      barrierMs: e.EXECUTION_START_BARRIER,
      heartbeatTimeoutMs: e.EXECUTION_HEARTBEAT_TIMEOUT,
      usageReportMs: e.EXECUTION_USAGE_PERIOD,
      stopWaitMs: e.EXECUTION_STOP_WAIT,
      usageTolerance: {
        seconds: e.EXECUTION_USAGE_TOLERANCE_SECONDS,
        percent: e.EXECUTION_USAGE_TOLERANCE_PERCENT,
      },
    },
    tickMs: e.EXECUTION_TICK,
    edgeTimeoutMs: e.EXECUTION_EDGE_TIMEOUT,
    stopGraceMs: e.EXECUTION_STOP_GRACE,
    network: networkFromEnv(e),
  };
};

export { InvalidConfigError };
