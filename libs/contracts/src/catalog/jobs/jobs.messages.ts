import { JobCancelled } from './job-cancelled.v1';
import { JobCompleted } from './job-completed.v1';
import { JobFailed } from './job-failed.v1';
import { JobSubmittedV1 } from './job-submitted.v1';
import { JobSubmitted, jobSubmittedV1ToV2 } from './job-submitted.v2';
import { UsageReported } from './usage-reported.v1';

/** Upcasters of the job-lifecycle messages, for registries that hold older versions. */
export const jobUpcasters = [jobSubmittedV1ToV2] as const;

/** Every job-lifecycle message, for registries (pass `jobUpcasters` too). */
export const jobMessages = [
  JobSubmittedV1,
  JobSubmitted,
  UsageReported,
  JobCompleted,
  JobFailed,
  JobCancelled,
] as const;
