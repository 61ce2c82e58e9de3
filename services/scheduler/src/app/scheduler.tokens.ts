/*
 * Injection tokens of the scheduler's providers. gpunet builds without decorator metadata, so every
 * injection names its token (ADR 0002).
 */

/** `SchedulerOptions`: the module's options, defaults resolved. */
export const SCHEDULER_OPTIONS = Symbol('gpunet.scheduler.options');
/** `PlacementEngine`: the queue, the placement core and the reservation rounds. */
export const PLACEMENT_ENGINE = Symbol('gpunet.scheduler.placement-engine');
/** `JobPlacementCommands`: the job placement aggregate's write path. */
export const JOB_PLACEMENTS = Symbol('gpunet.scheduler.job-placements');
/** `OpenJobsRepository`: the jobs owed a decision and the submitted specs. */
export const OPEN_JOBS = Symbol('gpunet.scheduler.open-jobs');
/** `PlacementExplanationsRepository`: why each job's last placement attempt came out as it did. */
export const PLACEMENT_EXPLANATIONS = Symbol('gpunet.scheduler.placement-explanations');
/** `JobIntake`: funded, submitted and cancelled jobs into the engine. */
export const JOB_INTAKE = Symbol('gpunet.scheduler.job-intake');
/** `PlacerLeadership`: the placer lease, and consuming only while holding it. */
export const PLACER_LEADERSHIP = Symbol('gpunet.scheduler.placer-leadership');
