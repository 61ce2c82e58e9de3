/** The scheduler's settings, from the environment. */
export interface SchedulerConfig {
  readonly databaseUrl: string;
  /** The service's own Postgres schema. Default `scheduler`. */
  readonly schema: string;
  readonly natsUrl: string;
  /** Subject/stream namespace (tests); default ''. */
  readonly prefix: string;
  /** How long every chosen edge has to accept a reservation. Default 5 s. */
  readonly reservationDeadlineMs: number;
  /** How long accepted reservations are held for execution. Default 5 min. */
  readonly holdMs: number;
  /** Reservation rounds before a job is unschedulable. Default 5. */
  readonly maxAttempts: number;
  /**
   * A job queued this long without a placement becomes `job.unschedulable` (`Unschedulable`, with
   * the last reasons). Default 1 h.
   */
  readonly maxWaitMs?: number;
  /** How often a standby replica tries to take over the placer lease. Default 5 s. */
  readonly leaseRetryMs?: number;
}

export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfigError';
  readonly code = 'INVALID_CONFIG' as const;
}

const positiveInt = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidConfigError(`${name} must be a positive integer`);
  return value;
};

export const configFromEnv = (env: NodeJS.ProcessEnv): SchedulerConfig => {
  const databaseUrl = env['DATABASE_URL'] ?? '';
  if (!/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new InvalidConfigError('DATABASE_URL must be a postgres:// URL');
  const schema = env['SCHEDULER_SCHEMA'] ?? 'scheduler';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new InvalidConfigError('SCHEDULER_SCHEMA is not a schema name');
  return {
    databaseUrl,
    schema,
    natsUrl: env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
    prefix: env['NATS_PREFIX'] ?? '',
    reservationDeadlineMs: positiveInt(env, 'RESERVATION_DEADLINE_MS', 5_000),
    holdMs: positiveInt(env, 'RESERVATION_HOLD_MS', 300_000),
    maxAttempts: positiveInt(env, 'MAX_RESERVATION_ROUNDS', 5),
    leaseRetryMs: positiveInt(env, 'SCHEDULER_LEASE_RETRY_MS', 5_000),
    maxWaitMs: positiveInt(env, 'MAX_QUEUE_WAIT_MS', 3_600_000),
  };
};
