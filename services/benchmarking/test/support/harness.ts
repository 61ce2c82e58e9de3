import 'reflect-metadata';
import {
  FakeClock,
  type NatsTestContext,
  type PostgresTestSchema,
  seededRandom,
  useNats,
  usePostgres,
} from '@gpunet/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Registry } from 'prom-client';
import type { BenchmarkingConfig } from '../../src/app/benchmarking.config';
import {
  BENCHMARKING_RUNTIME,
  BenchmarkingModule,
  type BenchmarkingRuntime,
} from '../../src/app/benchmarking.module';

/** The harness's LAN threshold (µs): well above loopback under any load. */
export const HARNESS_LAN_RTT_US = 25_000;

export interface BenchmarkingUnderTest {
  readonly runtime: BenchmarkingRuntime;
  readonly app: INestApplicationContext;
  readonly clock: FakeClock;
  readonly metrics: Registry;
  readonly pg: PostgresTestSchema;
  readonly nats: NatsTestContext;
  readonly errors: string[];
  close(): Promise<void>;
}

/** Benchmarking as a Nest application on the shared NATS and Postgres, in its own namespace, with a fake clock. */
export const startBenchmarking = async (
  label: string,
  overrides: Partial<BenchmarkingConfig> = {},
  clock = new FakeClock(),
): Promise<BenchmarkingUnderTest> => {
  const pg = await usePostgres({ label });
  const nats = await useNats({ label });
  const metrics = new Registry();
  const errors: string[] = [];
  const config: BenchmarkingConfig = {
    databaseUrl: pg.connectionString,
    schema: pg.schema,
    natsUrl: String(nats.servers),
    natsSeed: null,
    prefix: nats.prefix,
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
    ...overrides,
  };
  const app = await NestFactory.createApplicationContext(
    BenchmarkingModule.forRoot({
      config,
      clock,
      random: seededRandom(`benchmarking-${label}`).next,
      metrics,
      onError: (e, c) => errors.push(`${c}: ${String(e)}`),
      batchSize: 16,
    }),
    { logger: false, abortOnError: false },
  );
  await app.init();
  const runtime = app.get<BenchmarkingRuntime>(BENCHMARKING_RUNTIME);
  return {
    runtime,
    app,
    clock,
    metrics,
    pg,
    nats,
    errors,
    close: async () => {
      await app.close();
      await nats.cleanup();
      await pg.drop();
    },
  };
};
