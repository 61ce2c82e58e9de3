import 'reflect-metadata';
import {
  type PostgresTestSchema,
  type NatsTestContext,
  usePostgres,
  useNats,
  waitFor,
  FakeClock,
  serviceConnection,
} from '@gpunet/testing';
import { createUser, fromSeed } from '@nats-io/nkeys';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { runService } from '@gpunet/service-runtime';
import { createLogger } from '@gpunet/telemetry';
import type { INestApplicationContext } from '@nestjs/common';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import type { Registry } from 'prom-client';
import type { DiscoveryConfig } from '../../src/app/discovery.config';
import { DiscoveryModule } from '../../src/app/discovery.module';
import type { DiscoveryService } from '../../src/app/discovery.service';
import { DISCOVERY } from '../../src/app/discovery.tokens';

export { gpuRequirement } from './requirement';

export const REPO = resolve(import.meta.dirname, '../../../..');
const EDGE_MAIN = join(REPO, 'services/provider-edge/src/main.ts');

export interface DiscoveryUnderTest {
  readonly runtime: DiscoveryService;
  readonly eventing: EventingRuntime;
  readonly app: INestApplicationContext;
  readonly clock: FakeClock;
  readonly metrics: Registry;
  readonly pg: PostgresTestSchema;
  readonly nats: NatsTestContext;
  readonly errors: string[];
  close(): Promise<void>;
}

/** Discovery as a Nest application on the shared NATS and Postgres, in its own namespace, with a fake clock. */
export const startDiscovery = async (
  label: string,
  overrides: Partial<DiscoveryConfig> = {},
): Promise<DiscoveryUnderTest> => {
  const pg = await usePostgres({ label });
  const nats = await useNats({ label });
  const clock = new FakeClock();
  const errors: string[] = [];
  const config: DiscoveryConfig = {
    ...serviceConnection(pg, nats),
    livenessWindowMs: 30_000,
    sweepIntervalMs: 0,
    heartbeatFlushMs: 0,
    ...overrides,
  };
  // The production boot (runService), quiet, with a fake clock and consumer batches of 16.
  const service = await runService({
    name: 'discovery',
    module: ({ metrics }) =>
      DiscoveryModule.forRoot({
        config,
        clock,
        metrics,
        onError: (e, c) => errors.push(`${c}: ${String(e)}`),
      }),
    transport: { defaults: { batchSize: 16 } },
    handleSignals: false,
    env: {},
    logger: createLogger({
      service: 'discovery',
      destination: new Writable({ write: (_c, _e, done) => done() }),
    }),
  });
  const { app } = service;
  const metrics = service.context.metrics;
  const runtime = app.get<DiscoveryService>(DISCOVERY);
  const eventing = app.get<EventingRuntime>(EVENTING);
  return {
    runtime,
    eventing,
    app,
    clock,
    metrics,
    pg,
    nats,
    errors,
    close: async () => {
      await service.close();
      await nats.cleanup();
      await pg.drop();
    },
  };
};

export interface EdgeProcess {
  readonly edgeId: string;
  readonly dir: string;
  readonly logs: () => string;
  /** Freezes the process (it stops heartbeating without a goodbye). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** Starts it again from the same directory (identity and state survive). */
  restart(): Promise<void>;
}

const POLICY = (name: string) => `version: 1
name: ${name}
gpus: { share: all, max_per_job: 8 }
cpu: { reserve_cores: 2 }
memory: { reserve: 8GiB }
images: { allow: ["nvcr.io/nvidia/", "docker.io/pytorch/"] }
pricing:
  asset: USDC
  floors: [{ model: H100, per_gpu_hour: "2.50" }, { model: A100, per_gpu_hour: "1.20" }]
  default_per_gpu_hour: "0.30"
subnets: [public]
jobs: { max_duration: 24h }
location: { continent: EU, country: DE }
`;

/**
 * A real provider-edge process (`provider-edge start --simulate …`), with an identity written the way
 * `edge init` writes it. Runs from the repository's sources under tsx, like `npm run gpunet`.
 */
export const startEdgeProcess = async (options: {
  readonly name: string;
  readonly inventory: string;
  readonly nats: string;
  readonly prefix: string;
  readonly heartbeat?: string;
  /** The edge's nkey seed (`SU…`); default a new one. */
  readonly seed?: string;
}): Promise<EdgeProcess> => {
  const dir = await mkdtemp(join(tmpdir(), `gpunet-edge-${options.name}-`));
  const kp = options.seed ? fromSeed(new TextEncoder().encode(options.seed)) : createUser();
  await writeFile(join(dir, 'edge.nk'), `${new TextDecoder().decode(kp.getSeed())}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'policy.yaml'), POLICY(options.name));
  await writeFile(join(dir, 'inventory.yaml'), options.inventory);
  let child: ChildProcess | undefined;
  let output = '';
  const launch = async () => {
    output = '';
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        EDGE_MAIN,
        'start',
        '--dir',
        dir,
        '--nats',
        options.nats,
        '--prefix',
        options.prefix,
        '--simulate',
        join(dir, 'inventory.yaml'),
        // Simulated GPUs and no jobs: host processes, as the development cluster's edges.
        '--runtime',
        'process',
        '--unsafe-allow-host-processes',
        '--heartbeat',
        options.heartbeat ?? '200ms',
        '--rescan',
        '0s',
      ],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    await waitFor(() => output.includes('"edge started"') || proc.exitCode !== null, {
      timeoutMs: 45_000,
      description: `edge ${options.name} to start`,
    });
    if (proc.exitCode !== null) throw new Error(`edge ${options.name} exited:\n${output}`);
  };
  const stop = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    proc.kill('SIGCONT');
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
  };
  await launch();
  return {
    edgeId: kp.getPublicKey(),
    dir,
    logs: () => output,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    stop,
    restart: async () => {
      await stop();
      await launch();
    },
  };
};

export const removeEdge = async (edge: EdgeProcess): Promise<void> => {
  await edge.stop();
  await rm(edge.dir, { recursive: true, force: true });
};

/** Reads one metric's value from a registry (0 when absent). */
export const metricValue = async (
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> => {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = (
    metric?.values as { labels: Record<string, string | number>; value: number }[] | undefined
  )?.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
};
