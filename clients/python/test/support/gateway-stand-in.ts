import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  buildEnvelope,
  type InputOf,
  JobCompleted,
  JobFunded,
  JobLaunching,
  JobPlaced,
  JobQueued,
  JobRunning,
  JobSettled,
  JobStatementQuery,
  type MessageDefinition,
  RankLogChunk,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import { REPO_ROOT, TestProcess, tsxArgv, tsxEnv } from '@gpunet/netns-testbed';
import {
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
} from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';

/*
 * The real gateway (services/gateway/src/main.ts as a child process, on a free port, with its own
 * Postgres schema and NATS namespace) with the rest of the cluster played by this process: the
 * events settlement, the scheduler and execution would publish go onto their namespaced JetStream
 * streams with real envelopes, and settlement's job-statement query is answered from what was
 * settled here. The Python tests start a job's lifecycle through a small control endpoint.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const newAdminKey = (): string =>
  `gpn_${[...randomBytes(12)].map((b) => BASE62[b % 62]).join('')}_${randomBytes(32).toString('base64url')}`;

export const TENANT = 'acme';
const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');
const GPU_CLASS = 'RTX4090-24GB';
/** Example 15's budget: 1 NTX (6 decimals) per GPU-hour at most, 4 GPUs for 10 minutes. */
const ESCROW = 700_000n;
const PAID = 5_554n;
const SUBNET_FEES = 276n;
const PLATFORM_FEES = 110n;

export interface GatewayStandIn {
  readonly url: string;
  /** A `read`+`submit` key of tenant `acme`, default subnet `demo`. */
  readonly tenantKey: string;
  /** Where the Python tests start a job's lifecycle: `POST /jobs/{id}/lifecycle`, then `GET` to await it. */
  readonly controlUrl: string;
  /** Plays a job from funded to settled, each step awaited in the gateway's read model. */
  lifecycle(jobId: string): Promise<void>;
  readonly gatewayOutput: () => string;
  close(): Promise<void>;
}

export const startGatewayStandIn = async (label: string): Promise<GatewayStandIn> => {
  const pg: PostgresTestSchema = await usePostgres({ label });
  const nats: NatsTestContext = await useNats({ label });
  const adminKey = newAdminKey();
  const gateway = new TestProcess('gateway', tsxArgv('services/gateway/src/main.ts'), {
    cwd: REPO_ROOT,
    env: tsxEnv({
      DATABASE_URL: pg.connectionString,
      GATEWAY_SCHEMA: pg.schema,
      NATS_URL: [nats.servers].flat().join(','),
      SUBJECT_PREFIX: nats.prefix,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_SSE_POLL: '50ms',
      GATEWAY_QUERY_TIMEOUT: '2s',
      GATEWAY_RATE_LIMIT_PER_SECOND: '1000',
      GATEWAY_RATE_LIMIT_BURST: '1000',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    }),
  });
  const closeAll = async (server?: Server) => {
    if (server) await new Promise((resolve) => server.close(resolve));
    if (gateway.exit === undefined) await gateway.stop(10_000);
    await nats.cleanup();
    await pg.drop();
  };
  let url: string;
  let tenantKey: string;
  try {
    // The gateway announces itself with a JSON log line: {"url":"http://127.0.0.1:<port>",…,"msg":"gateway started"}.
    const started = await gateway.waitForOutput(/"url":"(http:\/\/[^"]+)"[^\n]*"msg":"gateway started"/, {
      timeoutMs: 60_000,
    });
    url = started[1]!;
    const res = await fetch(`${url}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: TENANT, scopes: ['read', 'submit'], defaultSubnet: 'demo' }),
    });
    if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
    tenantKey = ((await res.json()) as { key: string }).key;
  } catch (error) {
    await closeAll();
    throw error;
  }

  const js = jetstream(nats.nc);
  const publish = async <D extends MessageDefinition>(
    def: D,
    data: InputOf<D>,
    jobId: string,
    tokens?: Record<string, string>,
  ) => {
    const envelope = buildEnvelope(def, data, { streamId: `job-${jobId}` });
    await js.publish(def.subject(tokens as never, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };
  const view = async (jobId: string) =>
    (await (
      await fetch(`${url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${tenantKey}` } })
    ).json()) as { status: string; cost: { settled: unknown } };
  // Events of four streams reach the gateway in no set order: each step waits for the last.
  const reached = (jobId: string, done: (v: Awaited<ReturnType<typeof view>>) => boolean, what: string) =>
    waitFor(async () => done(await view(jobId)), { timeoutMs: 20_000, description: `job ${jobId} ${what}` });
  const status = (jobId: string, s: string) => reached(jobId, (v) => v.status === s, s);

  const settled = new Set<string>();
  const statements = serveQuery(
    JobStatementQuery,
    ({ jobId }) =>
      Promise.resolve({
        jobId,
        status: settled.has(jobId) ? ('settled' as const) : ('unknown' as const),
        tenantId: settled.has(jobId) ? TENANT : null,
        subnetId: settled.has(jobId) ? 'demo' : null,
        asset: settled.has(jobId) ? 'NTX' : null,
        funded: settled.has(jobId) ? ESCROW.toString() : '0',
        paidToProviders: settled.has(jobId) ? PAID.toString() : '0',
        subnetFees: settled.has(jobId) ? SUBNET_FEES.toString() : '0',
        platformFees: settled.has(jobId) ? PLATFORM_FEES.toString() : '0',
        refunded: settled.has(jobId) ? (ESCROW - PAID - SUBNET_FEES - PLATFORM_FEES).toString() : '0',
        pending: '0',
        escrowBalance: '0',
        legs: [],
      }),
    { nc: nats.nc, prefix: nats.prefix },
  );
  await nats.nc.flush();

  const lifecycle = async (jobId: string): Promise<void> => {
    await publish(
      JobFunded,
      {
        jobId,
        tenantId: TENANT,
        subnetId: 'demo',
        subnetVersion: 1,
        asset: 'NTX',
        gpus: 4,
        gpuClasses: [GPU_CLASS],
        maxDurationSeconds: 600,
        escrow: ESCROW.toString(),
        maxCharge: '666667',
        subnetFee: '16667',
        platformFee: '16666',
        terms: {
          pricing: { mode: 'fixed', pricePerGpuHour: { [GPU_CLASS]: '1000000' } },
          maxPricePerGpuHour: '1000000',
          billingIncrementSeconds: 60,
          minimumChargeSeconds: 0,
          subnetFeeBps: 250,
          platformFeeBps: 250,
          lowEscrowBps: 1000,
          slashing: {},
        },
        fundedAt: '2030-01-01T00:00:00.000Z',
      },
      jobId,
    );
    await status(jobId, 'funded');
    await publish(
      JobQueued,
      { jobId, tenantId: TENANT, attempt: 1, reason: null, at: '2030-01-01T00:00:00.100Z' },
      jobId,
    );
    await status(jobId, 'queued');
    const host = (providerId: string, hostId: string, gpuUuids: string[]) => ({
      providerId,
      hostId,
      gpuUuids,
      reservationId: `r-${hostId}`,
      ranks: 2,
    });
    await publish(
      JobPlaced,
      {
        jobId,
        tenantId: TENANT,
        asset: 'NTX',
        allocations: [
          {
            name: 'ddp',
            gpuCount: 4,
            nodes: [host(EDGE_A, 'host-a', ['GPU-1', 'GPU-2']), host(EDGE_B, 'host-b', ['GPU-3', 'GPU-4'])],
            predictedStepUs: 1000,
            pricePerHourMinor: '400000',
          },
        ],
        holdUntil: '2030-01-01T00:05:00.000Z',
        attempt: 1,
        at: '2030-01-01T00:00:01.000Z',
      },
      jobId,
    );
    await status(jobId, 'placed');
    await publish(
      JobLaunching,
      {
        jobId,
        tenantId: TENANT,
        attempt: 1,
        worldSize: 4,
        masterAddr: '10.77.0.1',
        masterPort: 29500,
        ranks: [0, 1, 2, 3].map((rank) => ({
          rank,
          localRank: rank % 2,
          nodeRank: Math.floor(rank / 2),
          allocation: 'ddp',
          providerId: rank < 2 ? EDGE_A : EDGE_B,
          hostId: rank < 2 ? 'host-a' : 'host-b',
          reservationId: rank < 2 ? 'r-host-a' : 'r-host-b',
          gpuUuids: [`GPU-${rank + 1}`],
          gpuClass: GPU_CLASS,
          address: rank < 2 ? '10.77.0.1' : '10.77.0.2',
        })),
        barrierUntil: '2030-01-01T00:01:00.000Z',
        at: '2030-01-01T00:00:02.000Z',
      },
      jobId,
    );
    await status(jobId, 'launching');
    await publish(
      JobRunning,
      { jobId, attempt: 1, runUntil: '2030-01-01T00:10:02.000Z', at: '2030-01-01T00:00:03.000Z' },
      jobId,
    );
    await status(jobId, 'running');
    for (const rank of [0, 2])
      await publish(
        RankLogChunk,
        {
          jobId,
          attempt: 1,
          rank,
          stream: 'stdout',
          seq: 1,
          lines: [`{"event": "step", "rank": ${rank}, "step": 0, "loss": 19.4}`],
          dropped: 0,
          at: '2030-01-01T00:00:04.000Z',
        },
        jobId,
        { edgeId: rank < 2 ? EDGE_A : EDGE_B, jobId },
      );
    await publish(
      JobCompleted,
      {
        jobId,
        usage: [
          { providerId: EDGE_A, gpuClass: GPU_CLASS, gpus: 2, gpuSeconds: 9 },
          { providerId: EDGE_B, gpuClass: GPU_CLASS, gpus: 2, gpuSeconds: 9 },
        ],
        faults: [],
        completedAt: '2030-01-01T00:00:07.000Z',
      },
      jobId,
    );
    await status(jobId, 'completed');
    settled.add(jobId);
    await publish(
      JobSettled,
      {
        jobId,
        tenantId: TENANT,
        subnetId: 'demo',
        asset: 'NTX',
        outcome: 'completed',
        funded: ESCROW.toString(),
        paidToProviders: PAID.toString(),
        subnetFees: SUBNET_FEES.toString(),
        platformFees: PLATFORM_FEES.toString(),
        refunded: (ESCROW - PAID - SUBNET_FEES - PLATFORM_FEES).toString(),
        providers: [EDGE_A, EDGE_B].map((providerId) => ({
          providerId,
          gpuSecondsBilled: 9,
          paid: (PAID / 2n).toString(),
          subnetFee: (SUBNET_FEES / 2n).toString(),
          platformFee: (PLATFORM_FEES / 2n).toString(),
          forfeited: '0',
        })),
        settledAt: '2030-01-01T00:00:08.000Z',
      },
      jobId,
    );
    await reached(jobId, (v) => v.cost.settled !== null, 'settled');
  };

  // The control endpoint: a lifecycle runs in the background while the Python test follows the job.
  const running = new Map<string, Promise<void>>();
  const control = createServer((req, res) => {
    const m = /^\/jobs\/([A-Za-z0-9_-]+)\/lifecycle$/.exec(req.url ?? '');
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!m) return reply(404, { error: `no such control path ${req.url}` });
    const jobId = m[1]!;
    if (req.method === 'POST') {
      const run = lifecycle(jobId);
      // Awaited by the GET below; kept from being an unhandled rejection meanwhile.
      run.catch(() => undefined);
      running.set(jobId, run);
      return reply(202, { jobId });
    }
    const run = running.get(jobId);
    if (!run) return reply(404, { error: `no lifecycle of job ${jobId} was started` });
    run.then(
      () => reply(200, { jobId, settled: true }),
      (error: unknown) => reply(500, { error: error instanceof Error ? error.message : String(error) }),
    );
  });
  const controlUrl = await new Promise<string>((resolve) =>
    control.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(control.address() as { port: number }).port}`),
    ),
  );

  return {
    url,
    tenantKey,
    controlUrl,
    lifecycle,
    gatewayOutput: () => gateway.output,
    close: async () => {
      statements.unsubscribe();
      await closeAll(control);
    },
  };
};
