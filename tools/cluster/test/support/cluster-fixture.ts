import {
  type Envelope,
  type JobCompleted,
  JobSubmitted,
  type PayloadOf,
  prefixSubject,
  type RankLogChunk,
} from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import { EventCollector, type NatsTestContext, useNats, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { Client } from 'pg';
import { expect } from 'vitest';
import { type ControlPlaneService, DevCluster, openDevEconomy, publishAs } from '../../src';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

/** The subnet every cluster test runs in: fixed price per simulated RTX 4090, open membership. */
export const SUBNET = 'demo';
export const ASSET = 'NTX';
export const GPU_CLASS = 'RTX-4090';
/** 1 NTX (6 decimals) per GPU-hour. */
export const PRICE_PER_GPU_HOUR = 1_000_000n;

/** A simulated host with `count` (default two) RTX 4090s; `prefix` keeps its GPU ids unique in the cluster. */
export const rtxHost = (prefix: string, count = 2): string => `uuid_prefix: SIM-${prefix}
gpus:
  - { model: NVIDIA GeForce RTX 4090, count: ${count}, vram: 24GiB, compute_capability: "8.9", cuda_version: "12.4" }
host: { cpu_cores: 16, memory: 64GiB }
`;

export interface ClusterUnderTest {
  readonly cluster: DevCluster;
  readonly nats: NatsTestContext;
  /** Every event the services publish in this namespace. */
  readonly events: EventCollector<Envelope>;
  close(): Promise<void>;
}

/** Starts the given services on the shared NATS (a fresh namespace) and Postgres (fresh schemas). */
export const startCluster = async (
  label: string,
  services: readonly ControlPlaneService[],
  env: Partial<Record<ControlPlaneService, Record<string, string>>> = {},
): Promise<ClusterUnderTest> => {
  const nats = await useNats({ label });
  const schemaPrefix = nats.prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const events = new EventCollector<Envelope>();
  const sub = nats.nc.subscribe(prefixSubject(nats.prefix, '>'), {
    callback: (_e, msg) => {
      try {
        const e = msg.json<Envelope>();
        if (typeof e === 'object' && e !== null && 'type' in e) events.push(e);
      } catch {
        // not an envelope (a request, a log chunk's reply)
      }
    },
  });
  const cluster = await DevCluster.start({
    databaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    prefix: nats.prefix,
    schemaPrefix,
    services,
    env,
  });
  return {
    cluster,
    nats,
    events,
    close: async () => {
      sub.unsubscribe();
      await cluster.stop();
      const pg = new Client({ connectionString: DATABASE_URL });
      await pg.connect();
      for (const schema of cluster.schemas) await pg.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pg.end();
      await nats.cleanup();
    },
  };
};

/** A tenant with money, a subnet owned by someone, and the given providers in it (staked). */
export const openEconomy = (
  c: ClusterUnderTest,
  tenantId: string,
  providerIds: readonly string[],
): Promise<void> =>
  openDevEconomy(c.nats.nc, c.nats.prefix, {
    subnetId: SUBNET,
    asset: ASSET,
    gpuClass: GPU_CLASS,
    pricePerGpuHour: PRICE_PER_GPU_HOUR,
    tenantId,
    tenantDeposit: 1_000_000_000n,
    providerIds,
  });

/** Submits a job as the gateway does: `job.submitted` v2 with the normalized spec and its terms. */
export const submitJob = (
  c: ClusterUnderTest,
  job: {
    jobId: string;
    tenantId: string;
    spec: NormalizedSpec;
    gpus: number;
    /** What the submission tells settlement to hold escrow for; default the spec's max duration. */
    maxDurationSeconds?: number;
  },
): Promise<Envelope> =>
  publishAs(jetstream(c.nats.nc), c.nats.prefix, JobSubmitted, {
    jobId: job.jobId,
    tenantId: job.tenantId,
    subnetId: SUBNET,
    asset: ASSET,
    gpus: job.gpus,
    gpuClasses: [GPU_CLASS],
    maxPricePerGpuHour: PRICE_PER_GPU_HOUR.toString(),
    maxDurationSeconds: job.maxDurationSeconds ?? Math.ceil(job.spec.maxDurationMs / 1000),
    submittedAt: new Date().toISOString(),
    spec: job.spec,
  });

/** Resolves once discovery has announced every given provider online. */
export const providersOnline = (c: ClusterUnderTest, providerIds: readonly string[]): Promise<unknown> =>
  waitFor(
    () =>
      providerIds.every((id) =>
        c.events.items.some(
          (x) => x.type === 'provider.online' && (x.data as { providerId: string }).providerId === id,
        ),
      ),
    { timeoutMs: 60_000, description: 'every provider online' },
  );

/**
 * A job's rank output on stdout that parses as JSON (the examples print one object a line), in
 * order, each with the attempt it belongs to.
 */
export const rankJsonLines = (
  c: ClusterUnderTest,
  jobId: string,
): ({ attempt: number } & Record<string, unknown>)[] =>
  c.events.items
    .filter((e) => e.type === 'edge.rank-log')
    .map((e) => e.data as PayloadOf<typeof RankLogChunk>)
    .filter((chunk) => chunk.jobId === jobId && chunk.stream === 'stdout')
    .flatMap((chunk) =>
      chunk.lines.flatMap((line) => {
        try {
          return [{ ...(JSON.parse(line) as Record<string, unknown>), attempt: chunk.attempt }];
        } catch {
          return [];
        }
      }),
    );

/**
 * The job's end — `job.completed`, `job.failed` or `job.unschedulable` — or, after `timeoutMs`, an
 * error carrying `explain(jobId)` (its events and the processes' last lines).
 */
export const jobEnded = (
  c: ClusterUnderTest,
  jobId: string,
  explain: (jobId: string) => string,
  timeoutMs = 300_000,
): Promise<Envelope> =>
  c.events
    .waitFor(
      (e) =>
        (e.type === 'job.completed' || e.type === 'job.failed' || e.type === 'job.unschedulable') &&
        (e.data as { jobId: string }).jobId === jobId,
      { timeoutMs },
    )
    .catch((error: unknown) => {
      throw new Error(`the job did not end:\n${explain(jobId)}`, { cause: error });
    });

/**
 * What every 4-rank DDP job of the cluster tests must show once it completed (`end`): each rank
 * trained (its "done" line says the loss fell, with world size 4), each of `providerIds` was metered
 * for its 2 GPUs, and settlement settled the job as completed.
 */
export const expectTrainedMeteredSettled = async (
  c: ClusterUnderTest,
  jobId: string,
  end: Envelope,
  providerIds: readonly string[],
  explain: (jobId: string) => string,
): Promise<void> => {
  const done = rankJsonLines(c, jobId).filter((l) => l['event'] === 'done');
  expect(done.map((d) => d['rank']).sort(), explain(jobId)).toEqual([0, 1, 2, 3]);
  expect(done.every((d) => d['loss_fell'] === true && d['world_size'] === 4)).toBe(true);

  const completed = end.data as PayloadOf<typeof JobCompleted>;
  expect(completed.usage.map((u) => u.providerId).sort()).toEqual([...providerIds].sort());
  expect(completed.usage.every((u) => u.gpus === 2 && u.gpuSeconds > 0)).toBe(true);

  const settled = await c.events.waitFor(
    (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === jobId,
    { timeoutMs: 60_000 },
  );
  expect(settled.data).toMatchObject({ outcome: 'completed' });
};
