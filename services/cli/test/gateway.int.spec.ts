import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildEnvelope,
  GetProvider,
  GetProviderTrust,
  JobCompleted,
  JobFailed,
  JobFunded,
  JobLaunching,
  JobPlaced,
  JobQueued,
  JobRunning,
  type MessageDefinition,
  RankLogChunk,
  SimulatedChainDepositRequest,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import {
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
} from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/app/cli';
import type { CliIo } from '../src/app/io';
import { nodeIo } from '../src/infra/node-io';

/*
 * The CLI against the REAL gateway (services/gateway/src/main.ts as a child process, on a free port,
 * with its own Postgres schema and NATS namespace). The scheduler and execution do not run: their
 * events are published on their namespaced streams with real envelopes, as they would.
 */
const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLE = join(ROOT, 'docs', 'examples', '15-multi-provider-ddp.yaml');
const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const adminKey = `gpn_${[...randomBytes(12)].map((b) => BASE62[b % 62]).join('')}_${randomBytes(32).toString('base64url')}`;

describe('gpunet against a real gateway', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let gateway: ChildProcess;
  let url = '';
  let gatewayLog = '';
  let dir = '';
  let tenantKey = '';

  /** Runs one command line in-process with the real I/O; the config lives in the suite's directory. */
  const gpunet = async (argv: string[], env: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const real = nodeIo();
    const io: CliIo = {
      ...real,
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
      env: { HOME: dir, GPUNET_CONFIG: join(dir, 'config.json'), ...env },
    };
    const code = await runCli(argv, io);
    return { code, stdout: out.join(''), stderr: err.join('') };
  };

  const publish = async (def: MessageDefinition, data: unknown, jobId: string) => {
    const envelope = buildEnvelope(def, data as never, { streamId: `job-${jobId}` });
    await jetstream(nats.nc).publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  const publishLog = async (jobId: string, rank: number, seq: number, lines: string[]) => {
    const envelope = buildEnvelope(
      RankLogChunk,
      { jobId, attempt: 1, rank, stream: 'stdout', seq, lines, dropped: 0, at: '2030-01-01T00:00:03.000Z' },
      { streamId: `job-${jobId}` },
    );
    await jetstream(nats.nc).publish(
      RankLogChunk.subject({ edgeId: rank < 2 ? EDGE_A : EDGE_B, jobId }, nats.prefix),
      JSON.stringify(envelope),
      { msgID: envelope.eventId },
    );
  };

  /** Events of four streams reach the gateway in no set order: each step waits for the last. */
  const statusOf = async (jobId: string): Promise<string> =>
    (
      (await (
        await fetch(`${url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${tenantKey}` } })
      ).json()) as {
        status: string;
      }
    ).status;
  const reached = (jobId: string, status: string) =>
    waitFor(async () => (await statusOf(jobId)) === status, {
      timeoutMs: 20_000,
      description: `job ${jobId} ${status}`,
    });

  const funded = (jobId: string) => ({
    jobId,
    tenantId: 'acme',
    subnetId: 'demo',
    subnetVersion: 1,
    asset: 'NTX',
    gpus: 4,
    gpuClasses: ['RTX4090-24GB'],
    maxDurationSeconds: 600,
    escrow: '700000',
    maxCharge: '666667',
    subnetFee: '16667',
    platformFee: '16666',
    terms: {
      pricing: { mode: 'fixed', pricePerGpuHour: { 'RTX4090-24GB': '1000000' } },
      maxPricePerGpuHour: '1000000',
      billingIncrementSeconds: 60,
      minimumChargeSeconds: 0,
      subnetFeeBps: 250,
      platformFeeBps: 250,
      lowEscrowBps: 1000,
      slashing: {},
    },
    fundedAt: '2030-01-01T00:00:00.000Z',
  });

  const submitted = async (): Promise<string> => {
    const r = await gpunet(['job', 'submit', '--json', EXAMPLE]);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { jobId: string }).jobId;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gpunet-cli-'));
    pg = await usePostgres({ label: 'cli' });
    nats = await useNats({ label: 'cli' });
    gateway = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'services/gateway/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'),
        DATABASE_URL: pg.connectionString,
        GATEWAY_SCHEMA: pg.schema,
        NATS_URL: [nats.servers].flat().join(','),
        SUBJECT_PREFIX: nats.prefix,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_KEY: adminKey,
        GATEWAY_SSE_POLL: '50ms',
        GATEWAY_QUERY_TIMEOUT: '1s',
        GATEWAY_RATE_LIMIT_PER_SECOND: '1000',
        GATEWAY_RATE_LIMIT_BURST: '1000',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stdout?.on('data', (b: Buffer) => (gatewayLog += b.toString()));
    gateway.stderr?.on('data', (b: Buffer) => (gatewayLog += b.toString()));
    // The gateway announces itself with a JSON log line: {"url":"http://127.0.0.1:<port>","msg":"gateway started"}.
    url = await waitFor(
      () => {
        if (gateway.exitCode !== null)
          throw new Error(`the gateway exited ${gateway.exitCode}:\n${gatewayLog}`);
        return /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"gateway started"/.exec(gatewayLog)?.[1];
      },
      { timeoutMs: 45_000, description: 'the gateway to start' },
    );
    const res = await fetch(`${url}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: 'acme', scopes: ['read', 'submit'], defaultSubnet: 'demo' }),
    });
    expect(res.status).toBe(201);
    tenantKey = ((await res.json()) as { key: string }).key;
  }, 60_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      gateway.kill('SIGTERM');
      await exited;
    }
    await nats?.cleanup();
    await pg?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('logs in: a bad key is refused (exit 3); a good one is saved 0600 and never printed', async () => {
    const bad = await gpunet(['login', '--gateway', url, '--key', `gpn_AAAAAAAAAAAA_${'x'.repeat(43)}`]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('HTTP 401');
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${tenantKey}\n`);
    const ok = await gpunet(['login', '--gateway', url, '--key-file', keyFile]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`logged in to ${url}`);
    // The secret is base64url and may itself hold '_': take all of it, not what a split leaves.
    const secret = /^gpn_[A-Za-z0-9]{12}_([A-Za-z0-9_-]{43})$/.exec(tenantKey)?.[1];
    expect(secret).toBeDefined();
    expect(ok.stdout + ok.stderr).not.toContain(secret);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({
      gateway: url,
      apiKey: tenantKey,
    });
  });

  it('submits the multi-provider example, gets and lists it, cancels it', async () => {
    const human = await gpunet(['job', 'submit', EXAMPLE]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^submitted job [A-Za-z0-9_-]+ \(first-multi-provider-ddp\): 4 GPUs in subnet demo, status submitted\n$/,
    );
    const jobId = /submitted job (\S+)/.exec(human.stdout)![1]!;

    const got = await gpunet(['job', 'get', jobId]);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain(`job ${jobId}  first-multi-provider-ddp`);
    expect(got.stdout).toMatch(/status +submitted/);
    const json = JSON.parse((await gpunet(['job', 'get', '--json', jobId])).stdout) as {
      status: string;
      gpus: number;
    };
    expect(json).toMatchObject({ status: 'submitted', gpus: 4 });

    const listed = JSON.parse((await gpunet(['job', 'ls', '--json', '--limit', '10'])).stdout) as {
      items: { jobId: string }[];
    };
    expect(listed.items.map((j) => j.jobId)).toContain(jobId);
    const table = await gpunet(['job', 'ls', '--status', 'submitted']);
    expect(table.stdout).toMatch(
      new RegExp(
        `^JOB +NAME +STATUS +GPUS +SUBNET +SUBMITTED +COST\\n(.*\\n)*${jobId} +first-multi-provider-ddp +submitted +4 +demo`,
      ),
    );

    const cancel = await gpunet(['job', 'cancel', jobId, '--reason', 'wrong dataset']);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`cancellation of job ${jobId} requested`);
    const after = JSON.parse((await gpunet(['job', 'get', '--json', jobId])).stdout) as {
      cancelRequestedAt: string | null;
    };
    expect(after.cancelRequestedAt).not.toBeNull();
  });

  it('names the field with line:column for an invalid spec (exit 1), and what the gateway refuses', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, readFileSync(EXAMPLE, 'utf8').replace('count: 4', 'count: four'));
    const local = await gpunet(['job', 'submit', bad]);
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(
      new RegExp(`${bad}:\\d+:\\d+: allocations\\.ddp\\.resources\\.gpus\\.count: `),
    );

    // Valid as a spec, but the gateway needs a budget: its problem names the field.
    const noBudget = join(dir, 'no-budget.yaml');
    writeFileSync(noBudget, readFileSync(EXAMPLE, 'utf8').replace(/budget:\n( {2}.*\n)+/, ''));
    const refused = await gpunet(['job', 'submit', noBudget]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 400/);
    expect(refused.stderr).toMatch(/budget/);
    const asJson = await gpunet(['job', 'submit', '--json', noBudget]);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ok: false, exitCode: 1, problem: { status: 400 } });
  });

  it('exits 3 on a bad key, 4 on an unknown job, 5 when the gateway is unreachable', async () => {
    const badKey = await gpunet(['job', 'ls'], { GPUNET_API_KEY: `gpn_BBBBBBBBBBBB_${'y'.repeat(43)}` });
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toContain('HTTP 401');
    const missing = await gpunet(['job', 'get', 'no-such-job']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('HTTP 404');
    // A port nobody listens on: bound, then released.
    const server = createServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    await new Promise((resolve) => server.close(resolve));
    const down = await gpunet(['job', 'ls'], { GPUNET_GATEWAY: `http://127.0.0.1:${port}` });
    expect(down.code).toBe(5);
    expect(down.stderr).toContain(
      `cannot reach the gateway at http://127.0.0.1:${port}: connect ECONNREFUSED`,
    );
  });

  it("account deposit: settlement's simulated chain credits the wallet once per key; without it, exit 1 naming the wallet", async () => {
    const unavailable = await gpunet(['account', 'deposit', '100']);
    expect(unavailable.code).toBe(1);
    expect(unavailable.stderr).toContain('HTTP 503');
    expect(unavailable.stderr).toContain('wallet');

    // Settlement's answer as its simulated chain gives it (settlement itself does not run here).
    const asked: { ownerId: string; asset: string; amount: string }[] = [];
    let available = 0n;
    const served = serveQuery(
      SimulatedChainDepositRequest,
      (request) => {
        asked.push(request);
        available += BigInt(request.amount);
        return Promise.resolve({ chainTxId: `sim-${asked.length}`, available: available.toString() });
      },
      { nc: nats.nc, prefix: nats.prefix },
    );
    try {
      await nats.nc.flush();
      const first = await gpunet(['account', 'deposit', '100', '--idempotency-key', 'dep-cli-1']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe('deposited 100 NTX to NTX:wallet:acme (chain tx sim-1); available 100 NTX\n');
      const again = await gpunet(['account', 'deposit', '100', '--json', '--idempotency-key', 'dep-cli-1']);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual({
        chainTxId: 'sim-1',
        ownerId: 'acme',
        asset: 'NTX',
        amount: '100000000',
        available: '100000000',
      });
      const half = await gpunet(['account', 'deposit', '0.5', '--json']);
      expect(JSON.parse(half.stdout)).toMatchObject({ amount: '500000', available: '100500000' });
      expect(asked).toEqual([
        { ownerId: 'acme', asset: 'NTX', amount: '100000000' },
        { ownerId: 'acme', asset: 'NTX', amount: '500000' },
      ]);
    } finally {
      served.unsubscribe();
    }
  });

  it("providers show: a GPU that failed its challenge, and why; a silent benchmarking is exit 1 with the gateway's 503", async () => {
    // Discovery's and benchmarking's answers as their query contracts allow (neither runs here).
    const gpu = {
      uuid: 'GPU-0',
      index: 0,
      vendor: 'nvidia' as const,
      model: 'NVIDIA H100 80GB HBM3',
      vramBytes: 80 * 2 ** 30,
      computeCapability: { major: 9, minor: 0 },
      cudaVersion: '12.4',
      rocmVersion: null,
      architecture: null,
      pciBusId: null,
      priceFloorMinor: null,
      directPeers: [],
      available: true,
    };
    const discovery = serveQuery(
      GetProvider,
      ({ providerId }) =>
        Promise.resolve({
          provider:
            providerId === EDGE_A
              ? {
                  providerId,
                  name: 'fast-claims',
                  simulated: false,
                  isolation: 'container' as const,
                  cpuArchitecture: 'amd64',
                  cpuMillicores: 16_000,
                  memoryBytes: 64 * 2 ** 30,
                  location: { continent: null, country: null, city: null },
                  subnets: ['demo'],
                  maxGpusPerJob: 1,
                  maxJobDurationMs: null,
                  asset: 'NTX',
                  status: 'online' as const,
                  isolationDetail: 'Docker containers (runc): container root is host root',
                  gpus: [gpu],
                }
              : null,
        }),
      { nc: nats.nc, prefix: nats.prefix },
    );
    await nats.nc.flush();
    try {
      const silent = await gpunet(['providers', 'show', EDGE_A]);
      expect(silent.code).toBe(1);
      expect(silent.stderr).toContain('HTTP 503');
      expect(silent.stderr).toContain('benchmarking did not answer');
      const challengeId = '01900000-0000-7000-8000-00000000000a';
      const benchmarking = serveQuery(
        GetProviderTrust,
        ({ providerId }) =>
          Promise.resolve({
            trust: {
              providerId,
              simulated: false,
              reliability: {
                providerId,
                score: 0.5,
                mismatches: 1,
                verifiedRuns: 0,
                failedRuns: 1,
                lastVerifiedAt: null,
                lastMismatchAt: '2030-01-01T00:00:05.000Z',
              },
              gpus: [
                {
                  uuid: 'GPU-0',
                  status: 'unverified' as const,
                  since: '2030-01-01T00:00:05.000Z',
                  challengeId,
                },
              ],
              challenges: [
                {
                  challengeId,
                  reason: 'registration' as const,
                  jobId: null,
                  gpuUuid: 'GPU-0',
                  outcome: 'failed' as const,
                  evidence: {
                    seed: 'ab'.repeat(32),
                    n: 2048,
                    dtype: 'fp16' as const,
                    claimedTflops: 989,
                    deadlineMs: 250,
                    elapsedMs: null,
                    root: null,
                    openedRows: [],
                    failure: { kind: 'no-answer' as const, detail: 'no commitment within 250 ms' },
                    bytesSent: 120,
                    bytesReceived: 0,
                  },
                  at: '2030-01-01T00:00:05.000Z',
                },
              ],
            },
          }),
        { nc: nats.nc, prefix: nats.prefix },
      );
      try {
        await nats.nc.flush();
        const shown = await gpunet(['providers', 'show', EDGE_A]);
        expect(shown.code, shown.stderr).toBe(0);
        expect(shown.stdout).toContain('  reliability 0.50: 0 verified, 1 failed, 1 mismatched');
        expect(shown.stdout).toContain('  GPU 0 unverified: no-answer: no commitment within 250 ms');
        expect(shown.stdout).toMatch(
          /2030-01-01T00:00:05\.000Z +registration +0 +failed +2048 fp16 +—\/250 +989 +no-answer: no commitment within 250 ms/,
        );
        const json = JSON.parse((await gpunet(['providers', 'show', EDGE_A, '--json'])).stdout) as {
          gpus: { verification: { status: string } }[];
        };
        expect(json.gpus[0]!.verification.status).toBe('unverified');
        expect((await gpunet(['providers', 'show', EDGE_B])).code).toBe(4);
      } finally {
        benchmarking.unsubscribe();
      }
    } finally {
      discovery.unsubscribe();
    }
  });

  it('follows a job live: queued → funded → placed on two providers → ranks → logs → completed with cost', async () => {
    const jobId = await submitted();
    const follow = gpunet(['job', 'follow', jobId]);
    await publish(JobFunded, funded(jobId), jobId);
    await reached(jobId, 'funded');
    await publish(
      JobQueued,
      { jobId, tenantId: 'acme', attempt: 1, reason: null, at: '2030-01-01T00:00:00.000Z' },
      jobId,
    );
    await reached(jobId, 'queued');
    const node = (providerId: string, hostId: string, gpus: string[]) => ({
      providerId,
      hostId,
      gpuUuids: gpus,
      reservationId: `r-${hostId}`,
      ranks: 2,
    });
    await publish(
      JobPlaced,
      {
        jobId,
        tenantId: 'acme',
        asset: 'NTX',
        allocations: [
          {
            name: 'ddp',
            gpuCount: 4,
            nodes: [node(EDGE_A, 'host-a', ['GPU-1', 'GPU-2']), node(EDGE_B, 'host-b', ['GPU-3', 'GPU-4'])],
            predictedStepUs: 1000,
            pricePerHourMinor: '4000000',
          },
        ],
        holdUntil: '2030-01-01T00:05:00.000Z',
        attempt: 1,
        at: '2030-01-01T00:00:01.000Z',
      },
      jobId,
    );
    await reached(jobId, 'placed');
    const rank = (i: number) => ({
      rank: i,
      localRank: i % 2,
      nodeRank: Math.floor(i / 2),
      allocation: 'ddp',
      providerId: i < 2 ? EDGE_A : EDGE_B,
      hostId: i < 2 ? 'host-a' : 'host-b',
      reservationId: i < 2 ? 'r-host-a' : 'r-host-b',
      gpuUuids: [`GPU-${i + 1}`],
      gpuClass: 'RTX4090-24GB',
      address: i < 2 ? '10.77.0.1' : '10.77.0.2',
    });
    await publish(
      JobLaunching,
      {
        jobId,
        tenantId: 'acme',
        attempt: 1,
        worldSize: 4,
        masterAddr: '10.77.0.1',
        masterPort: 29500,
        ranks: [0, 1, 2, 3].map(rank),
        barrierUntil: '2030-01-01T00:01:00.000Z',
        at: '2030-01-01T00:00:02.000Z',
      },
      jobId,
    );
    await reached(jobId, 'launching');
    await publish(
      JobRunning,
      { jobId, attempt: 1, runUntil: '2030-01-01T00:10:02.000Z', at: '2030-01-01T00:00:03.000Z' },
      jobId,
    );
    await reached(jobId, 'running');
    await publishLog(jobId, 0, 1, ['step 1 loss 2.30']);
    await publishLog(jobId, 2, 1, ['step 1 loss 2.31']);
    await publish(
      JobCompleted,
      {
        jobId,
        usage: [
          { providerId: EDGE_A, gpuClass: 'RTX4090-24GB', gpus: 2, gpuSeconds: 120 },
          { providerId: EDGE_B, gpuClass: 'RTX4090-24GB', gpus: 2, gpuSeconds: 118 },
        ],
        faults: [],
        completedAt: '2030-01-01T00:01:03.000Z',
      },
      jobId,
    );
    const r = await follow;
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout;
    const order = [
      'submitted: 4 GPUs in subnet demo, ≤ 1 NTX per GPU-hour',
      'funded: 0.7 NTX in escrow',
      'queued: waiting for capacity',
      `placed on UAAAAAAAAAAA… host-a (2 GPUs), UBBBBBBBBBBB… host-b (2 GPUs) — 4 NTX/hour`,
      'launching attempt 1: 4 ranks starting (master 10.77.0.1:29500)',
      'running (attempt 1)',
      'completed: 238 GPU-seconds (UAAAAAAAAAAA… 120, UBBBBBBBBBBB… 118)',
      `job ${jobId} completed; 238 GPU-seconds; cost 0 NTX accrued of 0.7 NTX escrow`,
    ];
    let at = -1;
    for (const line of order) {
      const i = out.indexOf(line);
      expect(i, `${line}\nin\n${out}`).toBeGreaterThan(at);
      at = i;
    }
    expect(out).toContain('[rank 0] step 1 loss 2.30');
    expect(out).toContain('[rank 2] step 1 loss 2.31');
    expect(out.match(/\[rank 0\] step 1 loss 2.30/g)).toHaveLength(1);

    // The stored output, by rank.
    const logs = await gpunet(['job', 'logs', jobId, '--rank', '2']);
    expect(logs).toMatchObject({ code: 0, stdout: '[rank 2] step 1 loss 2.31\n' });
    // Cancelling a finished job: the gateway's 409, exit 1.
    const late = await gpunet(['job', 'cancel', jobId]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('HTTP 409');
  });

  it('--json follow: one object per line; a failed job exits 1 with its reason', async () => {
    const jobId = await submitted();
    await publish(JobFunded, funded(jobId), jobId);
    await reached(jobId, 'funded');
    await publish(
      JobFailed,
      {
        jobId,
        reason: { code: 'RANK_FAILED', message: 'rank 3 exited with code 1' },
        usage: [],
        faults: [],
        failedAt: '2030-01-01T00:00:09.000Z',
      },
      jobId,
    );
    const r = await gpunet(['job', 'follow', '--json', jobId]);
    expect(r.code).toBe(1);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; type?: string; status?: string });
    expect(lines.map((l) => l.type ?? l.kind)).toEqual(['job.submitted', 'job.funded', 'job.failed', 'end']);
    expect(lines.at(-1)).toMatchObject({ kind: 'end', status: 'failed' });
    const human = await gpunet(['job', 'follow', '--no-logs', jobId]);
    expect(human.stdout).toContain('failed: RANK_FAILED: rank 3 exited with code 1; no GPU time used');
  });

  it('bin/gpunet exits 3 with a revoked-looking key and 0 for job ls', () => {
    const env = { ...process.env, GPUNET_CONFIG: join(dir, 'config.json'), GPUNET_GATEWAY: url };
    const run = (extra: Record<string, string>) =>
      spawnSync(join(ROOT, 'bin', 'gpunet'), ['job', 'ls'], {
        env: { ...env, ...extra },
        encoding: 'utf8',
        timeout: 60_000,
      });
    expect(run({}).status).toBe(0);
    const bad = run({ GPUNET_API_KEY: `gpn_CCCCCCCCCCCC_${'z'.repeat(43)}` });
    expect(bad.status).toBe(3);
    expect(bad.stderr).toContain('HTTP 401');
  });
});
