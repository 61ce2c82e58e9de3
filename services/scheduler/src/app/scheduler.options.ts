import type { Registry } from '@gpunet/telemetry';
import type { PlacementDecision, SchedulerClock } from './placement.engine';
import type { SchedulerConfig } from './scheduler.config';

export interface SchedulerModuleOptions {
  readonly config: SchedulerConfig;
  /** Deadline timers and timestamps; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: SchedulerClock;
  readonly metrics: Registry;
  /** Told every failure the scheduler recovers from. Default: none. */
  readonly onError?: (error: unknown, context: string) => void;
  /** Every placement decision (`PlacementEngine`'s `onDecision`): the service logs them. */
  readonly onDecision?: (decision: PlacementDecision) => void;
}

/** The options as the scheduler's providers get them (`SCHEDULER_OPTIONS`), defaults resolved. */
export interface SchedulerOptions {
  readonly config: SchedulerConfig;
  readonly clock: SchedulerClock;
  readonly onError: (error: unknown, context: string) => void;
  readonly onDecision?: (decision: PlacementDecision) => void;
}
