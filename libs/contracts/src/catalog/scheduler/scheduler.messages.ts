import { JobPlaced } from './job-placed.v1';
import { JobQueued } from './job-queued.v1';
import { JobUnschedulable } from './job-unschedulable.v1';

/** Every scheduler message, for registries. */
export const schedulerMessages = [JobQueued, JobPlaced, JobUnschedulable] as const;
