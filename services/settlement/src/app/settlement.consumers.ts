import type { DurableSettings } from '@gpunet/eventing';

/** The durable consumers' names: also their inbox and checkpoint keys, so they never change. */
export const GATEWAY_CONSUMER = 'settlement-gateway';
export const EXECUTION_CONSUMER = 'settlement-execution';
export const BENCHMARKING_CONSUMER = 'settlement-benchmarking';

/**
 * The consumers retry long: usage (or a usage dispute) may arrive before its job's submission
 * (another stream), and is retried with backoff until the submission catches up
 * (`JOB_NOT_KNOWN_YET`); after `maxAttempts` it is dead-lettered with the reason.
 */
export const CONSUMER_SETTINGS: DurableSettings = { maxAttempts: 20 };
