import {
  benchmarkingCatalog,
  benchmarkingStreams,
  type Clock,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  ExecutionStream,
  MessageDeadLettered,
  type MessageRegistry,
  providerCatalog,
} from '@gpunet/contracts';
import { EventingModule } from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { benchmarkingMigrations } from '../infra/benchmarking.migrations';
import { BenchmarkScheduler } from './benchmark.scheduler';
import type { BenchmarkingConfig } from './benchmarking.config';
import { benchmarkingMetrics } from './benchmarking.metrics';
import { BenchmarkingQueriesHandler } from './benchmarking-queries.handler';
import { BENCHMARKING_CONFIG, BENCHMARKING_METRICS, BENCHMARKING_RANDOM } from './benchmarking.tokens';
import { CoordinateRefitter } from './coordinate-refitter.service';
import { DiscoveryEventsHandler } from './discovery-events.handler';
import { EdgeReportsHandler } from './edge-reports.handler';
import { JobOverlaysHandler, jobOverlayMessages } from './job-overlays.handler';
import { LinkMeasurements } from './link-measurements.service';
import { OverlayLinks } from './overlay-links.service';
import { ProbeCycle } from './probe.cycle';
import { ProviderBenchmarks } from './provider-benchmarks.service';

export interface BenchmarkingModuleOptions {
  readonly config: BenchmarkingConfig;
  /** Business time (deadlines, expiry, spot checks); tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: Clock;
  /** Uniform [0, 1) source for spot checks and probe sampling; tests pass a seeded one. Default `Math.random`. */
  readonly random?: () => number;
  /** The service's metrics registry (from `SERVICE_CONTEXT`). */
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
}

/** Every message benchmarking understands. */
export const benchmarkingRegistry = (): MessageRegistry =>
  createRegistry([MessageDeadLettered, ...providerCatalog, ...benchmarkingCatalog, ...jobOverlayMessages]);

/** Declared (idempotently) so that benchmarking can start before discovery and execution. */
const streams = [DeadLettersStream, DiscoveryStream, ExecutionStream, ...benchmarkingStreams];

/**
 * Benchmarking, assembled on its eventing (database with its projections, NATS, streams, outbox
 * relay): the three consumers (discovery's provider events → claims view; edges' signed reports →
 * verification and links; execution's launches and jobs' overlay path reports → overlay links), the
 * three queries the scheduler reads, the benchmark scheduler, the probe cycle and the coordinate
 * refitter. Boot it with `runService`.
 */
@Module({})
export class BenchmarkingModule {
  static forRoot(options: BenchmarkingModuleOptions): DynamicModule {
    const { config, metrics } = options;
    return {
      module: BenchmarkingModule,
      imports: [
        EventingModule.forService('benchmarking', config, {
          registry: benchmarkingRegistry(),
          streams,
          migrations: benchmarkingMigrations,
          metrics,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
        }),
      ],
      controllers: [
        DiscoveryEventsHandler,
        EdgeReportsHandler,
        JobOverlaysHandler,
        BenchmarkingQueriesHandler,
      ],
      providers: [
        { provide: BENCHMARKING_CONFIG, useValue: config },
        { provide: BENCHMARKING_METRICS, useValue: benchmarkingMetrics(metrics) },
        { provide: BENCHMARKING_RANDOM, useValue: options.random ?? Math.random },
        ProviderBenchmarks,
        CoordinateRefitter,
        LinkMeasurements,
        OverlayLinks,
        BenchmarkScheduler,
        ProbeCycle,
      ],
    };
  }
}
