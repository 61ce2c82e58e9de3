import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  readNatsSeed,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';
import type { ExecutionPolicy } from '../domain/job-execution.decider';

/** Execution's settings, from the environment (durations as `30s`, `5m`). */
export interface ExecutionConfig {
  readonly databaseUrl: string;
  /** The service's own Postgres schema. Default `execution`. */
  readonly schema: string;
  readonly natsUrl: string;
  /** The service's NATS nkey seed (`NATS_NKEY_SEED_FILE`); null: no authentication (development). */
  readonly natsSeed: string | null;
  /** Subject/stream namespace (tests); default ''. */
  readonly prefix: string;
  /** Deadlines of the job aggregate (start barrier, heartbeat, usage period, stop wait). */
  readonly policy: ExecutionPolicy;
  /** How often deadlines are checked and unanswered commands re-sent. Default 1 s. */
  readonly tickMs: number;
  /** How long an edge has to answer a command. Default 5 s. */
  readonly edgeTimeoutMs: number;
  /** SIGTERM → SIGKILL grace the edges give stopped ranks. Default 10 s. */
  readonly stopGraceMs: number;
}

const EnvSchema = z.object({
  ...serviceEnvShape('execution'),
  EXECUTION_START_BARRIER: envDuration('5m'),
  EXECUTION_HEARTBEAT_TIMEOUT: envDuration('2m'),
  EXECUTION_USAGE_PERIOD: envDuration('1m'),
  EXECUTION_STOP_WAIT: envDuration('1m'),
  EXECUTION_TICK: envDuration('1s'),
  EXECUTION_EDGE_TIMEOUT: envDuration('5s'),
  EXECUTION_STOP_GRACE: envDuration('10s'),
});

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
    databaseUrl: e.DATABASE_URL,
    schema: e.EXECUTION_SCHEMA,
    natsUrl: e.NATS_URL,
    natsSeed: readNatsSeed('execution', e.NATS_NKEY_SEED_FILE),
    prefix: e.SUBJECT_PREFIX,
    policy: {
      barrierMs: e.EXECUTION_START_BARRIER,
      heartbeatTimeoutMs: e.EXECUTION_HEARTBEAT_TIMEOUT,
      usageReportMs: e.EXECUTION_USAGE_PERIOD,
      stopWaitMs: e.EXECUTION_STOP_WAIT,
    },
    tickMs: e.EXECUTION_TICK,
    edgeTimeoutMs: e.EXECUTION_EDGE_TIMEOUT,
    stopGraceMs: e.EXECUTION_STOP_GRACE,
  };
};

export { InvalidConfigError };
