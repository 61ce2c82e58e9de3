import { defineEvent } from '../../message';
import { ExecutionStream } from '../streams';
import { JobPathReportSchema } from './path-report.schemas';

/** Execution folded the edges' reports into the job's path report (direct or relayed, per pair). */
export const OverlayPathsReported = defineEvent({
  type: 'overlay.paths-reported',
  version: 1,
  subject: 'execution.overlay.paths-reported.v1',
  stream: ExecutionStream.name,
  description: "The job's overlay paths per pair of hosts: direct or relayed, RTT and measured throughput.",
  schema: JobPathReportSchema,
});
