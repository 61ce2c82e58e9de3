import type { Decider, JobCancelRequested, JobSubmitted, PayloadOf } from '@gpunet/contracts';
import { ConflictError, NotFoundError } from './gateway.errors';
import { type JobStatus, TERMINAL_STATUSES } from './job-view';

/** The events of a job's stream in the gateway's store: what its tenant asked for. */
export type JobRequestEvent =
  | { readonly type: 'job.submitted'; readonly data: PayloadOf<typeof JobSubmitted> }
  | { readonly type: 'job.cancel-requested'; readonly data: PayloadOf<typeof JobCancelRequested> };

export interface JobRequests {
  readonly submitted: boolean;
  readonly cancelRequested: boolean;
}

/**
 * Ask for the job's cancellation. `status` is the job's status now (the read model's, read with
 * the job's row locked): whether it has ended is other services' news, not in this stream.
 */
export interface RequestJobCancel {
  readonly type: 'RequestJobCancel';
  readonly jobId: string;
  readonly tenantId: string;
  readonly reason: string | null;
  readonly requestedAt: string;
  readonly status: JobStatus;
}

/**
 * The gateway's own job stream (`job.submitted`, then at most one `job.cancel-requested`). A job
 * that has ended cannot be cancelled (409); a second cancel of a job already being cancelled
 * decides nothing and answers the same.
 */
export const jobRequestsDecider: Decider<RequestJobCancel, JobRequestEvent, JobRequests> = {
  initialState: { submitted: false, cancelRequested: false },
  decide: (command, state) => {
    if (!state.submitted) throw new NotFoundError(`no job ${command.jobId}`);
    if (TERMINAL_STATUSES.has(command.status))
      throw new ConflictError(`job ${command.jobId} has already ended (${command.status})`);
    if (state.cancelRequested) return [];
    const { jobId, tenantId, reason, requestedAt } = command;
    return [{ type: 'job.cancel-requested', data: { jobId, tenantId, reason, requestedAt } }];
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'job.submitted':
        return { ...state, submitted: true };
      case 'job.cancel-requested':
        return { ...state, cancelRequested: true };
      default: {
        const never: never = event;
        return never;
      }
    }
  },
};
