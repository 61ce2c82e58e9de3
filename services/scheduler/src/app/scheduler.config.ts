import type { ServiceConnection } from '@gpunet/eventing';
import { parseServiceEnv, serviceConnectionOf, serviceEnvShape } from '@gpunet/service-runtime';
import { z } from 'zod';

/**
 * The scheduler's settings, from the environment: where its state and messages live (its schema,
 * default `scheduler`; its NATS user's seed, none on a development server) and how it places.
 */
export interface SchedulerConfig extends ServiceConnection {
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

const ms = (fallback: number) =>
  z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(fallback);

const EnvSchema = z.object({
  ...serviceEnvShape('scheduler'),
  RESERVATION_DEADLINE_MS: ms(5_000),
  RESERVATION_HOLD_MS: ms(300_000),
  MAX_RESERVATION_ROUNDS: ms(5),
  SCHEDULER_LEASE_RETRY_MS: ms(5_000),
  // A Node timer waits at most 2^31 − 1 ms (about 24.8 days); a longer one would fire at once.
  MAX_QUEUE_WAIT_MS: z.coerce.number().int().min(1).max(2_147_483_647).default(3_600_000),
});

/**
 * Reads the configuration with the services' shared reader (`DATABASE_URL`, `SCHEDULER_SCHEMA`,
 * `NATS_URL`, `NATS_NKEY_SEED_FILE`, `SUBJECT_PREFIX`, …); every problem names its variable.
 */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): SchedulerConfig => {
  const e = parseServiceEnv('scheduler', EnvSchema, env);
  return {
    ...serviceConnectionOf('scheduler', e),
    reservationDeadlineMs: e.RESERVATION_DEADLINE_MS,
    holdMs: e.RESERVATION_HOLD_MS,
    maxAttempts: e.MAX_RESERVATION_ROUNDS,
    leaseRetryMs: e.SCHEDULER_LEASE_RETRY_MS,
    maxWaitMs: e.MAX_QUEUE_WAIT_MS,
  };
};
