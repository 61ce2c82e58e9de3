import { Writable } from 'node:stream';
import { runService, type RunningService } from '@gpunet/service-runtime';
import { createLogger, type Registry } from '@gpunet/telemetry';
import {
  FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  seededRandom,
  useNats,
  usePostgres,
  serviceConnection,
} from '@gpunet/testing';
import { BenchmarkScheduler } from '../../src/app/benchmark.scheduler';
import type { BenchmarkingConfig } from '../../src/app/benchmarking.config';
import { BenchmarkingModule } from '../../src/app/benchmarking.module';
import { ChallengeScheduler } from '../../src/app/challenge.scheduler';
import type { MonotonicClock } from '../../src/app/monotonic-clock';
import { CoordinateRefitter } from '../../src/app/coordinate-refitter.service';
import { ProbeCycle } from '../../src/app/probe.cycle';

/** The harness's LAN threshold (µs): well above loopback under any load. */
export const HARNESS_LAN_RTT_US = 25_000;

export interface BenchmarkingUnderTest {
  readonly service: RunningService;
  readonly scheduler: BenchmarkScheduler;
  readonly probes: ProbeCycle;
  readonly refitter: CoordinateRefitter;
  readonly challenges: ChallengeScheduler;
  readonly clock: FakeClock;
  readonly metrics: Registry;
  readonly pg: PostgresTestSchema;
  readonly nats: NatsTestContext;
  readonly errors: string[];
  close(): Promise<void>;
  /** Stops the service (as a crash or deploy would) and boots it again on the same schema and namespace. */
  restart(): Promise<BenchmarkingUnderTest>;
}

/** What a suite may put in place of production's parts (each documented on `BenchmarkingModuleOptions`). */
export interface HarnessParts {
  readonly monotonicClock?: MonotonicClock;
}

const silent = createLogger({
  service: 'benchmarking',
  destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
});

/**
 * Benchmarking booted as in production (`runService`), on the shared NATS and Postgres, in its own
 * namespace, with a fake clock, a seeded random source and small consumer batches.
 */
export const startBenchmarking = async (
  label: string,
  overrides: Partial<BenchmarkingConfig> = {},
  clock = new FakeClock(),
  parts: HarnessParts = {},
): Promise<BenchmarkingUnderTest> => {
  const pg = await usePostgres({ label });
  const nats = await useNats({ label });
  return boot(label, pg, nats, overrides, clock, parts);
};

const boot = async (
  label: string,
  pg: PostgresTestSchema,
  nats: NatsTestContext,
  overrides: Partial<BenchmarkingConfig>,
  clock: FakeClock,
  parts: HarnessParts,
): Promise<BenchmarkingUnderTest> => {
  const errors: string[] = [];
  const config: BenchmarkingConfig = {
    ...serviceConnection(pg, nats),
    sweepIntervalMs: 0,
    probeIntervalMs: 0,
    profileTtlMs: 7 * 24 * 3600_000,
    renewBeforeMs: 24 * 3600_000,
    spotCheckProbability: 0,
    spotCheckMinIntervalMs: 24 * 3600_000,
    benchmarkTimeoutMs: 15 * 60_000,
    benchmarkMaxDurationMs: 60_000,
    maxRequestsPerSweep: 50,
    commandTimeoutMs: 2_000,
    probePeers: 2,
    throughputPeers: 1,
    probeUdpPort: 7946,
    probeTcpPort: 7947,
    probeLoopback: true,
    rttSamples: 4,
    rttTimeoutMs: 200,
    throughputMaxBytes: 1 << 20,
    throughputMaxMs: 1_000,
    linkTtlMs: 6 * 3600_000,
    // Every edge of these suites probes over loopback. On a loaded 2-core CI machine the minimum of
    // 4 loopback samples has exceeded 1 ms (the production default), so the LAN threshold here only
    // has to tell loopback from nothing: no peer of these suites is far away.
    lanRttUs: HARNESS_LAN_RTT_US,
    allowWhileBusy: false,
    // Challenges only when a suite ticks them.
    challengesEnabled: true,
    challengeTickIntervalMs: 0,
    challengeIdleIntervalMs: 6 * 3600_000,
    maxChallengesPerTick: 50,
    challengeLateGraceMs: 1_000,
    challengeOpenTimeoutMs: 2_000,
    challengePolicy: {},
    ...overrides,
  };
  const service = await runService({
    name: 'benchmarking',
    module: ({ metrics }) =>
      BenchmarkingModule.forRoot({
        config,
        clock,
        random: seededRandom(`benchmarking-${label}`).next,
        randomBytes: seededBytes(seededRandom(`benchmarking-bytes-${label}`).next),
        ...parts,
        metrics,
        onError: (e, c) => errors.push(`${c}: ${String(e)}`),
      }),
    handleSignals: false,
    env: {},
    logger: silent,
    transport: { defaults: { batchSize: 16 } },
  });
  return {
    service,
    scheduler: service.app.get(BenchmarkScheduler),
    probes: service.app.get(ProbeCycle),
    refitter: service.app.get(CoordinateRefitter),
    challenges: service.app.get(ChallengeScheduler),
    clock,
    metrics: service.context.metrics,
    pg,
    nats,
    errors,
    close: async () => {
      await service.close();
      await nats.cleanup();
      await pg.drop();
    },
    restart: async () => {
      await service.close();
      return boot(label, pg, nats, overrides, clock, parts);
    },
  };
};

/** Bytes from a seeded uniform source: reproducible seeds and openings. */
const seededBytes =
  (next: () => number) =>
  (size: number): Uint8Array =>
    Uint8Array.from({ length: size }, () => Math.floor(next() * 256));
