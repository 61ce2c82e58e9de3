import { given } from '@gpunet/testing';
import { describe, it } from 'vitest';
import { ConflictError, NotFoundError } from '../src/domain/gateway.errors';
import {
  type JobRequestEvent,
  jobRequestsDecider,
  type RequestJobCancel,
} from '../src/domain/job-requests.decider';

const T0 = '2030-01-01T00:00:00.000Z';
const JOB = '0190f3a0-0000-7000-8000-000000000001';

const submitted = {
  type: 'job.submitted',
  data: { jobId: JOB, tenantId: 'tenant-a' },
} as unknown as JobRequestEvent;

const cancelRequested: JobRequestEvent = {
  type: 'job.cancel-requested',
  data: { jobId: JOB, tenantId: 'tenant-a', reason: 'wrong dataset', requestedAt: T0 },
};

const cancel = (status: RequestJobCancel['status']): RequestJobCancel => ({
  type: 'RequestJobCancel',
  jobId: JOB,
  tenantId: 'tenant-a',
  reason: 'wrong dataset',
  requestedAt: T0,
  status,
});

describe('jobRequestsDecider', () => {
  it('records the cancel request of a running job', () => {
    given(jobRequestsDecider, [submitted]).when(cancel('running')).then([cancelRequested]);
  });

  it('decides nothing for a job already being cancelled: a second cancel answers the same', () => {
    given(jobRequestsDecider, [submitted, cancelRequested]).when(cancel('running')).then([]);
  });

  it('refuses to cancel a job that has ended (409), even one being cancelled', () => {
    for (const status of ['completed', 'failed', 'cancelled', 'rejected', 'unschedulable'] as const)
      given(jobRequestsDecider, [submitted]).when(cancel(status)).thenThrows(ConflictError);
    given(jobRequestsDecider, [submitted, cancelRequested])
      .when(cancel('cancelled'))
      .thenThrows(ConflictError);
  });

  it('knows no job that was never submitted here (404)', () => {
    given(jobRequestsDecider, []).when(cancel('submitted')).thenThrows(NotFoundError);
  });
});
