/*
 * The job lifecycle as other services announce it: the gateway submits jobs, execution reports
 * usage and the end of every job. Settlement consumes all of them (escrow, metering, payout); the
 * scheduler and the gateway will too.
 */
export { JobCancelled } from './job-cancelled.v1';
export { JobCompleted } from './job-completed.v1';
export { JobFailed } from './job-failed.v1';
export { JobSubmittedV1, MAX_JOB_DURATION_SECONDS } from './job-submitted.v1';
export { JobSubmitted, jobSubmittedV1ToV2 } from './job-submitted.v2';
export { jobMessages, jobUpcasters } from './jobs.messages';
export { ProviderFaultSchema } from './provider-fault.schemas';
export { ProviderUsageSchema } from './provider-usage.schemas';
export { UsageReported } from './usage-reported.v1';
