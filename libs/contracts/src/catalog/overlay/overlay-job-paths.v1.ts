import { z } from 'zod';
import { defineQuery } from '../../query';
import { EntityIdSchema } from '../primitives';
import { JobPathReportSchema } from './path-report.schemas';

/** The latest path report of a job. */
export const JobOverlayPathsQuery = defineQuery({
  name: 'overlay.job-paths',
  version: 1,
  request: z.strictObject({ jobId: EntityIdSchema }),
  response: JobPathReportSchema.nullable(),
  description: "The job's latest overlay path report, or null before its overlay is connected.",
});
