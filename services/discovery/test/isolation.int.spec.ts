import {
  buildEnvelope,
  type EdgeIsolation,
  EdgeInventoryReported,
  EdgeRegistered,
  FindCandidates,
  GetProvider,
  type Host,
  type PayloadOf,
  signingInput,
  UNREPORTED_ISOLATION,
} from '@gpunet/contracts';
import { askQuery, Database } from '@gpunet/eventing';
import { type PostgresTestSchema, usePostgres, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser, type KeyPair } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscoveryProjection1764460000000, discoveryMigrations } from '../src/infra/discovery.migrations';
import { type DiscoveryUnderTest, gpuRequirement, startDiscovery } from './support/harness';

const AT = '2030-01-01T00:00:00.000Z';

const USERNS: EdgeIsolation = {
  level: 'container-userns',
  runtime: 'docker',
  ociRuntime: 'runc',
  userNamespaces: true,
  detail: 'Docker 26.1.5 with runc: container root is an unprivileged host uid (userns-remap)',
};
const GVISOR: EdgeIsolation = {
  level: 'gvisor',
  runtime: 'docker',
  ociRuntime: 'runsc',
  userNamespaces: false,
  detail: 'Docker 26.1.5 with runsc (gVisor): a user-space kernel answers the job’s system calls',
};

const host = (isolation?: EdgeIsolation): Host => ({
  hostname: 'h',
  os: { platform: 'linux', release: '6.1', distribution: null },
  cpu: { model: 'x', logicalCores: 8, architecture: 'amd64' },
  memoryBytes: 2 ** 34,
  diskFreeBytes: 2 ** 40,
  containerRuntimes: [],
  addresses: [],
  ...(isolation === undefined ? {} : { isolation }),
});

const inventory: PayloadOf<typeof EdgeRegistered>['inventory'] = {
  simulated: true,
  backends: [{ name: 'simulated', status: 'ok', detail: null }],
  gpus: [
    {
      index: 0,
      uuid: 'SIM-nvidia-0',
      vendor: 'nvidia',
      model: 'NVIDIA H100 80GB HBM3',
      vramBytes: 80 * 2 ** 30,
      driverVersion: null,
      cudaVersion: '12.4',
      computeCapability: { major: 9, minor: 0 },
      rocmVersion: null,
      architecture: null,
      pciBusId: null,
      mig: { enabled: false, devices: [] },
    },
  ],
  links: [],
};

/**
 * The isolation each edge reports in its signed host (ADR 0072), stored by discovery, carried by
 * its candidates and shown in its provider view: real NATS and Postgres, reports signed as an edge
 * signs them and published on the EDGE stream.
 */
describe('discovery stores the isolation each edge reports (real NATS and Postgres)', () => {
  let d: DiscoveryUnderTest;

  /** Signs a report with the edge's key and publishes it on the edge's subject. */
  const report = async (
    def: typeof EdgeRegistered | typeof EdgeInventoryReported,
    kp: KeyPair,
    data: Record<string, unknown>,
  ) => {
    const edgeId = kp.getPublicKey();
    const unsigned = { edgeId, publicKey: edgeId, signedAt: AT, ...data };
    const signature = Buffer.from(kp.sign(new TextEncoder().encode(signingInput(def, unsigned)))).toString(
      'base64url',
    );
    const envelope = buildEnvelope(def, { ...unsigned, signature } as never, { streamId: `edge-${edgeId}` });
    await jetstream(d.nats.nc).publish(def.subject({ edgeId }, d.nats.prefix), JSON.stringify(envelope));
  };

  const register = (kp: KeyPair, isolation?: EdgeIsolation) =>
    report(EdgeRegistered, kp, {
      sequence: 1,
      name: `edge-${kp.getPublicKey().slice(1, 5)}`,
      agentVersion: '0.1.0',
      host: host(isolation),
      inventory,
      policy: {
        sharedGpuUuids: ['SIM-nvidia-0'],
        maxGpusPerJob: 1,
        maxJobDurationMs: null,
        cpuMillicores: 1000,
        memoryBytes: 2 ** 30,
        images: ['*'],
        pricing: { asset: 'USDC', defaultFloorMinor: null, floors: [] },
        subnets: ['public'],
        availability: null,
        location: { continent: null, country: null, city: null },
      },
    });

  const view = async (edgeId: string) =>
    (
      await askQuery(
        d.nats.nc,
        GetProvider,
        { providerId: edgeId },
        { prefix: d.nats.prefix, timeoutMs: 10_000 },
      )
    ).provider;

  const isolationOf = async (edgeId: string) =>
    waitFor(
      async () => {
        const p = await view(edgeId);
        return p === null ? undefined : { level: p.isolation, detail: p.isolationDetail };
      },
      { description: `provider ${edgeId} in the index`, timeoutMs: 15_000 },
    );

  const candidates = async () =>
    (
      await askQuery(
        d.nats.nc,
        FindCandidates,
        FindCandidates.request.parse({ gpu: gpuRequirement('{ count: 1 }') }),
        { prefix: d.nats.prefix, timeoutMs: 10_000 },
      )
    ).items;

  const row = async (edgeId: string) =>
    (
      await d.eventing.db.query<{ isolation: string; isolation_detail: string }>(
        `SELECT isolation, isolation_detail FROM "${d.pg.schema}".providers WHERE provider_id = $1`,
        [edgeId],
      )
    )[0];

  beforeAll(async () => {
    d = await startDiscovery('isolation');
  }, 60_000);
  afterAll(async () => {
    await d?.close();
  }, 60_000);

  it('an edge that reports none is taken as host processes, saying so; one that reports a level keeps it and its detail', async () => {
    const older = createUser();
    const userns = createUser();
    await register(older);
    await register(userns, USERNS);

    expect(await isolationOf(older.getPublicKey())).toEqual({
      level: 'host-process',
      detail: UNREPORTED_ISOLATION.detail,
    });
    expect(await isolationOf(userns.getPublicKey())).toEqual({ level: USERNS.level, detail: USERNS.detail });
    expect(await row(userns.getPublicKey())).toEqual({
      isolation: 'container-userns',
      isolation_detail: USERNS.detail,
    });
    // Candidates carry the level, which the scheduler's isolation filter reads.
    const levels = new Map((await candidates()).map((c) => [c.providerId, c.isolation]));
    expect(levels.get(older.getPublicKey())).toBe('host-process');
    expect(levels.get(userns.getPublicKey())).toBe('container-userns');

    // The older edge restarts on gVisor: its next inventory report says so, and discovery follows.
    await report(EdgeInventoryReported, older, { sequence: 2, host: host(GVISOR), inventory });
    await waitFor(async () => (await view(older.getPublicKey()))?.isolation === 'gvisor', {
      description: 'the new isolation in the index',
      timeoutMs: 15_000,
    });
    expect(await isolationOf(older.getPublicKey())).toEqual({ level: 'gvisor', detail: GVISOR.detail });
    expect(await row(older.getPublicKey())).toEqual({ isolation: 'gvisor', isolation_detail: GVISOR.detail });
  });
});

/**
 * The migration that adds the columns, on a projection of the first layout: each provider row
 * takes the isolation its stored host reported, or `UNREPORTED_ISOLATION` when it reported none.
 */
describe('discovery migrations: isolation columns from the stored hosts', () => {
  let pg: PostgresTestSchema;

  beforeAll(async () => {
    pg = await usePostgres({ label: 'discovery_isolation_migration' });
  });
  afterAll(async () => {
    await pg?.drop();
  });

  it('fills isolation and isolation_detail of existing rows, then requires them', async () => {
    const first = await new Database({
      url: pg.connectionString,
      schema: pg.schema,
      migrations: [DiscoveryProjection1764460000000],
    }).open();
    const insert = (id: string, reported: Host) =>
      first.query(
        `INSERT INTO "${pg.schema}".providers (provider_id, public_key, name, agent_version, status, simulated,
           registered_at, status_changed_at, cpu_architecture, cpu_millicores, memory_bytes, max_gpus_per_job,
           images, subnets, asset, host, inventory, policy, stream_version)
         VALUES ($1, $1, 'n', '0.1.0', 'online', true, $2, $2, 'amd64', 1000, 1073741824, 1, '{}', '{}', 'USDC',
           $3, '{}', '{}', 1)`,
        [id, AT, JSON.stringify(reported)],
      );
    await insert('older', host());
    await insert('sandboxed', host(USERNS));
    await first.close();

    const migrated = await new Database({
      url: pg.connectionString,
      schema: pg.schema,
      migrations: discoveryMigrations,
    }).open();
    try {
      const rows = await migrated.query<{ provider_id: string; isolation: string; isolation_detail: string }>(
        `SELECT provider_id, isolation, isolation_detail FROM "${pg.schema}".providers ORDER BY provider_id`,
      );
      expect(rows).toEqual([
        { provider_id: 'older', isolation: 'host-process', isolation_detail: UNREPORTED_ISOLATION.detail },
        { provider_id: 'sandboxed', isolation: 'container-userns', isolation_detail: USERNS.detail },
      ]);
      await expect(
        migrated.query(`UPDATE "${pg.schema}".providers SET isolation = NULL WHERE provider_id = 'older'`),
      ).rejects.toThrow(/null value/);
      await expect(
        migrated.query(`UPDATE "${pg.schema}".providers SET isolation = 'vm' WHERE provider_id = 'older'`),
      ).rejects.toThrow(/check constraint/);
    } finally {
      await migrated.close();
    }
  });
});
