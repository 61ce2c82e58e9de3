import { NormalizedSpecSchema } from '@gpunet/ensemble-spec';
import { defineEvent } from '../../message';
import { defineUpcaster } from '../../registry';
import { GatewayStream } from '../streams';
import { JobSubmittedV1 } from './job-submitted.v1';

/**
 * An orchestrator submitted a job; settlement holds its budget in escrow before it is scheduled,
 * the scheduler places it and execution runs it from `spec`, the normalized ensemble spec the
 * gateway validated (`@gpunet/ensemble-spec`). `spec` is null only for jobs submitted as v1.
 */
export const JobSubmitted = defineEvent({
  type: 'job.submitted',
  version: 2,
  subject: 'gateway.job.submitted.v2',
  stream: GatewayStream.name,
  description:
    'A job was submitted with its normalized spec; its budget (max price × GPUs × max duration + fees) is escrowed before scheduling.',
  schema: JobSubmittedV1.schema.extend({ spec: NormalizedSpecSchema.nullable().default(null) }),
});

/** Reads a `job.submitted` v1 as v2: a job submitted without a spec. */
export const jobSubmittedV1ToV2 = defineUpcaster({
  from: JobSubmittedV1,
  to: JobSubmitted,
  upcast: (data) => ({ ...data, spec: null }),
});
