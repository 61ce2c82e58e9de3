/*
 * The scheduler: gang placement with two-phase reservation on the edges. It consumes `job.funded`
 * and capacity events (`provider.online`, `provider.reservations-changed`) and announces where a
 * job runs (`job.placed`), that it waits for capacity (`job.queued`) or that it cannot run as asked
 * (`job.unschedulable`, with the core's reasons in words).
 */
export {
  type AuctionClearing,
  AuctionClearingSchema,
  JobPlaced,
  type PlacedAllocation,
  PlacedAllocationSchema,
  type PlacedNode,
  PlacedNodeSchema,
} from './job-placed.v1';
export { JobQueued } from './job-queued.v1';
export { JobUnschedulable, UnschedulableReasonSchema } from './job-unschedulable.v1';
export {
  AllocationExplanationSchema,
  AlternativeSchema,
  FigureSourceSchema,
  GetPlacementExplanation,
  GpuFigureSchema,
  LinkFigureSchema,
  PlacementExplanationSchema,
  type PlacementExplanationRecord,
  StepTimePredictionSchema,
} from './placement-explanation.v1';
export { schedulerMessages } from './scheduler.messages';
