import {
  BenchmarkingStream,
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  ExecutionStream,
  GatewayStream,
  GpuBenchmarked,
  GpuVerificationChanged,
  JobCancelled,
  JobFunded,
  JobSubmitted,
  JobSubmittedV1,
  LinkMeasured,
  MessageDeadLettered,
  type MessageRegistry,
  NetworkCoordinatesRefitted,
  newEventId,
  ProviderChallenged,
  providerCatalog,
  ProviderReliabilityChanged,
  schedulerMessages,
  SchedulerStream,
  SettlementStream,
  SubnetMemberStandingChanged,
  systemClock,
} from '@gpunet/contracts';
import { EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import { type DynamicModule, Module } from '@nestjs/common';
import { discoveryAndEdgesPorts } from '../infra/discovery-and-edges.ports';
import { loadMeasurements } from '../infra/measurements.repository';
import { OpenJobsRepository } from '../infra/open-jobs.repository';
import { SchedulerPlacementExplanations1764900000000 } from '../infra/placement-explanations.migration';
import { PlacementExplanationsRepository } from '../infra/placement-explanations.repository';
import { schedulerMigrations } from '../infra/scheduler.migrations';
import { loadStandings } from '../infra/subnet-standing.repository';
import { CancellationsHandler } from './cancellations.handler';
import { CapacityHandler } from './capacity.handler';
import { FundedJobsHandler } from './funded-jobs.handler';
import { JobIntake } from './job-intake.service';
import { JobPlacementCommands } from './job-placement.commands';
import { MeasurementsHandler } from './measurements.handler';
import { type JobPlacements, PlacementEngine, type SchedulerClock } from './placement.engine';
import { PlacementExplanationsHandler } from './placement-explanations.handler';
import { PlacerLeadership } from './placer-leadership.service';
import type { SchedulerModuleOptions, SchedulerOptions } from './scheduler.options';
import {
  JOB_INTAKE,
  JOB_PLACEMENTS,
  OPEN_JOBS,
  PLACEMENT_ENGINE,
  PLACEMENT_EXPLANATIONS,
  PLACER_LEADERSHIP,
  SCHEDULER_OPTIONS,
} from './scheduler.tokens';
import { SubmittedJobsHandler } from './submitted-jobs.handler';
import { SubnetStandingHandler } from './subnet-standing.handler';

/** Every message the scheduler reads or writes. */
export const schedulerRegistry = (): MessageRegistry =>
  createRegistry(
    [
      MessageDeadLettered,
      JobSubmittedV1,
      JobSubmitted,
      JobFunded,
      JobCancelled,
      GpuBenchmarked,
      LinkMeasured,
      NetworkCoordinatesRefitted,
      GpuVerificationChanged,
      ProviderReliabilityChanged,
      ProviderChallenged,
      SubnetMemberStandingChanged,
      ...providerCatalog,
      ...schedulerMessages,
    ],
    catalogUpcasters,
  );

/** The streams the scheduler reads (and SCHEDULER, which it writes). */
const schedulerStreams = [
  DeadLettersStream,
  GatewayStream,
  SettlementStream,
  DiscoveryStream,
  ExecutionStream,
  BenchmarkingStream,
  SchedulerStream,
];

const systemSchedulerClock: SchedulerClock = {
  now: () => systemClock.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
};

/**
 * The scheduler: its eventing (database with `open_jobs`, `job_specs`, `placement_explanations`, the
 * measurements projection and the subnet standing projection, NATS, streams, outbox relay), six
 * durable consumers as controllers (`job.funded`, `job.submitted` → the job queued once both are
 * known; provider events → parked jobs try again; `job.cancelled` → released; benchmarking's
 * measurements → the projection; settlement's member standing → the standing projection), the
 * placement engine with the job placement aggregate's write path, and the placer lease: the
 * consumers run only on the replica that holds it (`consumeAtStart: false`); every replica answers
 * `scheduler.placement-explanation`.
 */
@Module({})
export class SchedulerModule {
  static forRoot(options: SchedulerModuleOptions): DynamicModule {
    const resolved: SchedulerOptions = {
      config: options.config,
      clock: options.clock ?? systemSchedulerClock,
      onError: options.onError ?? (() => undefined),
      ...(options.onDecision ? { onDecision: options.onDecision } : {}),
    };
    const { config, clock, onError } = resolved;
    return {
      module: SchedulerModule,
      imports: [
        EventingModule.forService('scheduler', config, {
          registry: schedulerRegistry(),
          streams: schedulerStreams,
          migrations: [...schedulerMigrations, SchedulerPlacementExplanations1764900000000],
          clock,
          metrics: options.metrics,
          onError,
          consumeAtStart: false,
        }),
      ],
      controllers: [
        FundedJobsHandler,
        SubmittedJobsHandler,
        CapacityHandler,
        CancellationsHandler,
        PlacementExplanationsHandler,
        MeasurementsHandler,
        SubnetStandingHandler,
      ],
      providers: [
        { provide: SCHEDULER_OPTIONS, useValue: resolved },
        {
          provide: OPEN_JOBS,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) => new OpenJobsRepository(eventing.db),
        },
        {
          provide: PLACEMENT_EXPLANATIONS,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) => new PlacementExplanationsRepository(eventing.db),
        },
        { provide: JOB_PLACEMENTS, useClass: JobPlacementCommands },
        {
          provide: PLACEMENT_ENGINE,
          inject: [EVENTING, JOB_PLACEMENTS],
          useFactory: (eventing: EventingRuntime, placements: JobPlacements) =>
            new PlacementEngine({
              ports: discoveryAndEdgesPorts(eventing.client),
              measurements: (providerIds) => loadMeasurements(eventing.db, providerIds),
              standings: (subnetId, providerIds) => loadStandings(eventing.db, subnetId, providerIds),
              placements,
              clock,
              newId: newEventId,
              reservationDeadlineMs: config.reservationDeadlineMs,
              holdMs: config.holdMs,
              ...(config.maxWaitMs === undefined ? {} : { maxWaitMs: config.maxWaitMs }),
              onError,
              ...(resolved.onDecision ? { onDecision: resolved.onDecision } : {}),
            }),
        },
        { provide: JOB_INTAKE, useClass: JobIntake },
        { provide: PLACER_LEADERSHIP, useClass: PlacerLeadership },
      ],
    };
  }
}
