import { OverlayPathsReported, streamIdOf, systemClock } from '@gpunet/contracts';
import { EVENTING, EventingModule, type EventingRuntime } from '@gpunet/eventing';
import { JobOverlayCoordinator, natsEdgeOverlayTransport } from '@gpunet/overlay';
import type { Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { executionMigrations } from '../infra/execution.migrations';
import { HostRankNetwork } from '../infra/host-rank-network';
import { JobsRepository } from '../infra/jobs.repository';
import { natsEdgeCommands } from '../infra/nats-edge-commands';
import { OverlayRankNetwork } from '../infra/overlay-rank-network';
import { PostgresProviderDirectory } from '../infra/provider-directory';
import { EDGE_COMMANDS, type EdgeCommands } from './edge-commands.port';
import type { ExecutionConfig } from './execution.config';
import { EXECUTION_METRICS, type ExecutionMetrics, executionMetrics } from './execution.metrics';
import { executionRegistry, executionStreams } from './execution.registry';
import { JobPlacementsHandler } from './job-placements.handler';
import { type ExecutionClock, JobProcessManager } from './job-process.manager';
import { JobSubmissionsHandler } from './job-submissions.handler';
import { PROVIDER_DIRECTORY, type ProviderDirectory } from './provider-directory.port';
import { EscrowHandler } from './escrow.handler';
import { ProviderLivenessHandler } from './provider-liveness.handler';
import { ProvidersHandler } from './providers.handler';
import { RANK_NETWORK, type RankNetwork } from './rank-network.port';
import { RankStatusesHandler } from './rank-statuses.handler';
import { ReservationsHandler } from './reservations.handler';

export interface ExecutionModuleOptions {
  readonly config: ExecutionConfig;
  /** Deadlines and timestamps; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: ExecutionClock;
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Where ranks find each other. Default: `EXECUTION_NETWORK` (`defaultNetwork`). */
  readonly network?: (directory: ProviderDirectory) => RankNetwork;
  /** Replaces the edge command port (tests). */
  readonly edges?: (defaults: EdgeCommands) => EdgeCommands;
}

const systemExecutionClock: ExecutionClock = {
  now: () => systemClock.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/**
 * The network of `EXECUTION_NETWORK`: the hosts' own (`HostRankNetwork`), or a job overlay per job
 * (`OverlayRankNetwork`: the coordinator commands the edges over NATS; the job's path report is
 * appended to its overlay stream and published on EXECUTION through the outbox).
 */
const defaultNetwork = (
  config: ExecutionConfig,
  eventing: EventingRuntime,
  directory: ProviderDirectory,
): RankNetwork => {
  const network = config.network;
  if (network.kind === 'host') return new HostRankNetwork(directory);
  return new OverlayRankNetwork({
    coordinator: new JobOverlayCoordinator({
      transport: natsEdgeOverlayTransport(eventing.nats.nc, { prefix: config.prefix }),
    }),
    relays: network.relays,
    signingKey: network.signingKey,
    onError: eventing.onError,
    publishReport: async (report, cause) => {
      await eventing.store.append(
        streamIdOf('overlay', report.jobId),
        [eventing.envelopes.event(OverlayPathsReported, report, cause)],
        { expectedVersion: 'any' },
      );
    },
  });
};

/**
 * Execution, assembled: its eventing (Postgres with the job streams, `jobs` and `providers`; NATS;
 * the outbox relay that publishes the jobs' public events on EXECUTION), the four consumers'
 * controllers (submissions and cancel requests; placements; rank statuses; providers' addresses
 * and GPU models), and the process manager that drives the edges. Boot it with `runService`.
 */
@Module({})
export class ExecutionModule {
  static forRoot(options: ExecutionModuleOptions): DynamicModule {
    const { config } = options;
    const clock = options.clock ?? systemExecutionClock;
    const onError = options.onError ?? (() => undefined);
    return {
      module: ExecutionModule,
      imports: [
        EventingModule.forService('execution', config, {
          registry: executionRegistry(),
          streams: executionStreams,
          migrations: executionMigrations,
          clock,
          metrics: options.metrics,
          onError,
        }),
      ],
      controllers: [
        JobSubmissionsHandler,
        JobPlacementsHandler,
        RankStatusesHandler,
        ProvidersHandler,
        ReservationsHandler,
        ProviderLivenessHandler,
        EscrowHandler,
      ],
      providers: [
        { provide: EXECUTION_METRICS, useFactory: () => executionMetrics(options.metrics) },
        {
          provide: PROVIDER_DIRECTORY,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) => new PostgresProviderDirectory(eventing.db),
        },
        {
          provide: EDGE_COMMANDS,
          inject: [EVENTING],
          useFactory: (eventing: EventingRuntime) => {
            const edges = natsEdgeCommands(eventing.client, config.edgeTimeoutMs);
            return options.edges ? options.edges(edges) : edges;
          },
        },
        {
          provide: RANK_NETWORK,
          inject: [EVENTING, PROVIDER_DIRECTORY],
          useFactory: (eventing: EventingRuntime, directory: ProviderDirectory) =>
            options.network ? options.network(directory) : defaultNetwork(config, eventing, directory),
        },
        {
          provide: JobProcessManager,
          inject: [EVENTING, EDGE_COMMANDS, RANK_NETWORK, PROVIDER_DIRECTORY, EXECUTION_METRICS],
          useFactory: (
            eventing: EventingRuntime,
            edges: EdgeCommands,
            network: RankNetwork,
            directory: ProviderDirectory,
            metrics: ExecutionMetrics,
          ) =>
            new JobProcessManager({
              eventing,
              jobs: new JobsRepository(eventing.db),
              clock,
              policy: config.policy,
              edges,
              network,
              directory,
              metrics,
              tickMs: config.tickMs,
              stopGraceMs: config.stopGraceMs,
              onError,
            }),
        },
      ],
    };
  }
}
