import type { Envelope, JobPlaced, PayloadOf, ProviderChallenged } from '@gpunet/contracts';
import { REPO_ROOT, TestProcess } from '@gpunet/netns-testbed';
import { jetstream } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  depositOnSimulatedChain,
  devSubnetParameters,
  openDevEconomy,
  requestSubnet,
  requestSubnetJoin,
  type SimulatedEdge,
  startLyingH100Edge,
  startSimulatedEdge,
} from '../src';
import {
  type ClusterUnderTest,
  jobEnded,
  PRICE_PER_GPU_HOUR,
  providersOnline,
  rtxHost,
  startCluster,
} from './support/cluster-fixture';

/*
 * Trust enforced, end to end, on real components: the control plane as processes (settlement,
 * discovery, benchmarking, scheduler, execution, gateway) on real NATS and Postgres, two honest
 * simulated edges (two RTX 4090s each) in the dev subnet, one in a subnet of real value, and one lying edge — a real provider-edge whose fake
 * nvidia-smi claims two H100s (not simulated) and whose challenges are computed for real on one CPU
 * thread, far slower than an H100. The dev subnet prices both classes, so a job accepting both would
 * take the H100s if they were trusted.
 * 1. The liar's GPUs go pending, then fail their first challenge (no commitment by the deadline: the
 *    edge's worker stops there and sends nothing, the verifier records `no-answer`), turn
 *    unverified, its reliability drops; a job that accepts only H100s waits, and `gpunet job
 *    explain` names the GPUs unverified with the challenge; `gpunet providers show` prints the
 *    evidence; a 2-GPU job accepting both classes runs on the honest edges, never the liar, and
 *    settles.
 * 2. A subnet of USDC (an asset of real value: not in SETTLEMENT_TEST_ASSETS) with the default
 *    trust (simulated GPUs refused, containers at least): its only edge is simulated and runs host
 *    processes, so a job there waits, saying simulated GPUs are refused (the first rule its GPUs
 *    fail: each GPU is counted under one filter), and is cancelled; the edge shows it runs
 *    host-process, which the subnet refuses too. Creating a USDC subnet that allows simulated GPUs,
 *    or one that accepts host processes, is refused, naming the field.
 *
 * Measured on the loaded 2-core development machine: 40-70 s for the file, cluster start included
 * (three runs: 70 s, 62 s, 40 s).
 */
const TENANT = 'tenant-trust';
const DEV = 'trust-dev';
const REAL = 'trust-real';
const RTX = 'RTX-4090';
const H100 = 'H100-80GB';
const OWNER = 'trust-owner';
/** Settlement's default minimum stake to create a subnet (1 000 units of 6 decimals). */
const OWNER_STAKE = 1_000_000_000n;

/** Example 15's DDP job, with `gpus` GPUs of `models` in `subnet`, paid in `asset`. */
const ddpJob = (name: string, subnet: string, asset: string, gpus: number, models: string[]): string =>
  `apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: ${name} }
max_duration: 10m
subnet: ${subnet}
budget: { asset: ${asset}, decimals: 6, max_price_per_gpu_hour: '1.00' }
allocations:
  ddp:
    executor: process
    execution:
      cmd: [/usr/bin/python3, docs/examples/jobs/ddp_train.py, --steps, '10']
      env: { OMP_NUM_THREADS: '1' }
    resources:
      cpu: { cores: 1 }
      ram: { size: 1GiB }
      gpus: { count: ${gpus}, models: [${models.map((m) => `'${m}'`).join(', ')}] }
    distributed:
      framework: torchrun
      gpus_per_rank: 1
      ranks_per_node: { max: 2 }
      max_nodes: 2
`;

describe('trust enforced: a lying edge is caught and passed over; real value never pays simulated GPUs nor host processes', () => {
  let c: ClusterUnderTest;
  let gatewayUrl: string;
  let tenantKey: string;
  const adminKey = `gpn_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  /** alpha and beta: simulated, in the dev subnet (NTX). */
  const honest: SimulatedEdge[] = [];
  /** Simulated, in the subnet of real value (USDC). */
  let gamma: SimulatedEdge;
  let liar: SimulatedEdge;

  beforeAll(async () => {
    c = await startCluster(
      'trust',
      ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution', 'gateway'],
      {
        gateway: { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_KEY: adminKey },
        execution: { EXECUTION_USAGE_PERIOD: '2s', EXECUTION_START_BARRIER: '2m', EXECUTION_TICK: '500ms' },
        // A registered GPU is challenged within a second (the production tick is a minute).
        benchmarking: { BENCHMARKING_CHALLENGE_INTERVAL: '1s' },
        // USDC is held, and settles real value: only the cluster's NTX is a test asset.
        settlement: { SETTLEMENT_ASSETS: 'NTX,USDC' },
      },
    );
    const url = /"url":"([^"]+)"/.exec(c.cluster.service('gateway').output)?.[1];
    if (!url) throw new Error('the gateway did not say where it listens');
    gatewayUrl = url;
    const edge = (name: string, subnet: string, asset: string) =>
      startSimulatedEdge({
        name: `trust-${name}`,
        inventory: rtxHost(`trust-${name}`),
        subnets: [subnet],
        asset,
        natsUrl: 'nats://127.0.0.1:4222',
        prefix: c.nats.prefix,
        extraArgs: ['--job-files', REPO_ROOT],
      });
    // Discovery offers a job only providers pricing in its asset: gamma prices in USDC.
    [honest[0], honest[1], gamma, liar] = await Promise.all([
      edge('alpha', DEV, 'NTX'),
      edge('beta', DEV, 'NTX'),
      edge('gamma', REAL, 'USDC'),
      startLyingH100Edge({
        name: 'trust-liar',
        subnets: [DEV],
        natsUrl: 'nats://127.0.0.1:4222',
        prefix: c.nats.prefix,
        extraArgs: ['--job-files', REPO_ROOT],
      }),
    ]);
    const all = [...honest, liar].map((e) => e.edgeId);
    // The dev subnet (NTX, a test asset): RTX 4090s and H100s at the same price, simulated GPUs allowed.
    const dev = devSubnetParameters(RTX, PRICE_PER_GPU_HOUR);
    await openDevEconomy(c.nats.nc, c.nats.prefix, {
      subnetId: DEV,
      asset: 'NTX',
      gpuClass: RTX,
      pricePerGpuHour: PRICE_PER_GPU_HOUR,
      tenantId: TENANT,
      tenantDeposit: 1_000_000_000n,
      providerIds: all,
      parameters: {
        ...dev,
        gpuClasses: [H100, RTX],
        pricing: {
          mode: 'fixed',
          pricePerGpuHour: { [H100]: PRICE_PER_GPU_HOUR.toString(), [RTX]: PRICE_PER_GPU_HOUR.toString() },
        },
      },
    });
    // The real-value subnet: USDC, the default trust (simulated GPUs refused, verified required,
    // containers at least).
    const { trust: _trust, ...real } = dev;
    await depositOnSimulatedChain(c.nats.nc, c.nats.prefix, TENANT, 'USDC', 1_000_000_000n);
    await depositOnSimulatedChain(c.nats.nc, c.nats.prefix, OWNER, 'USDC', OWNER_STAKE);
    const js = jetstream(c.nats.nc);
    await requestSubnet(js, c.nats.prefix, {
      subnetId: REAL,
      ownerId: OWNER,
      asset: 'USDC',
      stake: OWNER_STAKE,
      parameters: real,
    });
    await depositOnSimulatedChain(c.nats.nc, c.nats.prefix, gamma.edgeId, 'USDC', 10_000n);
    await requestSubnetJoin(js, c.nats.prefix, { subnetId: REAL, providerId: gamma.edgeId, stake: 1_000n });
    await providersOnline(c, [...all, gamma.edgeId]);
    const created = await fetch(`${gatewayUrl}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: TENANT, scopes: ['read', 'submit'], name: 'trust' }),
    });
    if (!created.ok) throw new Error(`the tenant's API key: ${created.status} ${await created.text()}`);
    tenantKey = ((await created.json()) as { key: string }).key;
  }, 240_000);

  afterAll(async () => {
    for (const e of [...honest, gamma, liar]) await e?.remove().catch(() => undefined);
    await c?.close();
  }, 120_000);

  const explain = (jobId: string): string =>
    [
      ...c.events.items
        .filter((e) => JSON.stringify(e.data).includes(jobId) && e.type !== 'edge.rank-log')
        .map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 400)}`),
      ...c.cluster.options.services.map((s) => `--- ${s}\n${c.cluster.service(s).output.slice(-2000)}`),
      ...[...honest, gamma, liar].map((e) => `--- ${e.name}\n${e.process.output.slice(-2000)}`),
    ].join('\n');

  const api = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${gatewayUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${tenantKey}`, ...init.headers },
    });
  const submit = async (yaml: string): Promise<string> => {
    const res = await api('/v1/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(res.status, await res.clone().text()).toBe(202);
    return ((await res.json()) as { jobId: string }).jobId;
  };
  /** The CLI as a person runs it, against the cluster's gateway. */
  const gpunet = async (...args: string[]): Promise<string> => {
    const cli = new TestProcess(`gpunet ${args.join(' ')}`, [join(REPO_ROOT, 'bin/gpunet'), ...args], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        GPUNET_GATEWAY: gatewayUrl,
        GPUNET_API_KEY: tenantKey,
        GPUNET_CONFIG: join(REPO_ROOT, 'reports', `trust-cli-${process.pid}.json`),
      },
    });
    const exit = await cli.exited;
    expect(exit.code, cli.output).toBe(0);
    return cli.stdout;
  };
  const ofProvider = (type: string, providerId: string): Envelope[] =>
    c.events.items.filter(
      (e) => e.type === type && (e.data as { providerId?: string }).providerId === providerId,
    );
  /** The job's scheduling failure whose message says `words` (it waits, parked, with that reason). */
  const waitingBecause = (jobId: string, words: string): Promise<Envelope> =>
    c.events
      .waitFor(
        (e) =>
          (e.data as { jobId?: string }).jobId === jobId &&
          e.type.startsWith('job.') &&
          JSON.stringify(e.data).includes(words),
        { timeoutMs: 60_000 },
      )
      .catch((error: unknown) => {
        throw new Error(`the job did not wait saying ${words}:\n${explain(jobId)}`, { cause: error });
      });
  const cancel = async (jobId: string): Promise<void> => {
    const res = await api(`/v1/jobs/${jobId}/cancel`, { method: 'POST' });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    await c.events
      .waitFor(
        (e) =>
          (e.type === 'job.cancelled' || e.type === 'job.settled') &&
          (e.data as { jobId: string }).jobId === jobId,
        { timeoutMs: 60_000 },
      )
      .catch((error: unknown) => {
        throw new Error(`the job was not cancelled:\n${explain(jobId)}`, { cause: error });
      });
  };

  it('1. the liar fails its first challenge and is passed over; the job runs on the honest edges and settles', async () => {
    const liarId = liar.edgeId;
    // Pending at registration, then the first challenge fails: no commitment by its deadline.
    const failed = (await c.events
      .waitFor(
        (e) =>
          e.type === 'provider.challenged' &&
          (e.data as { providerId: string }).providerId === liarId &&
          (e.data as { outcome: string }).outcome === 'failed',
        { timeoutMs: 60_000 },
      )
      .catch((error: unknown) => {
        throw new Error(`the liar was not caught:\n${liar.process.output.slice(-3000)}`, { cause: error });
      })) as Envelope & { data: PayloadOf<typeof ProviderChallenged> };
    const first = ofProvider('provider.challenged', liarId)[0]!.data as PayloadOf<typeof ProviderChallenged>;
    expect(first.challengeId).toBe(failed.data.challengeId);
    expect(first).toMatchObject({ reason: 'registration', outcome: 'failed', jobId: null });
    // The verifier sized it for an H100's reference figure (742.1 fp16 TFLOPS): the largest n, under a second.
    expect(first.evidence).toMatchObject({ dtype: 'fp16', claimedTflops: 742.1, n: 4096, root: null });
    expect(first.evidence.deadlineMs).toBeLessThan(1_000);
    expect(first.evidence.failure?.kind).toBe('no-answer');
    // The verifier waited the deadline and its grace (BENCHMARKING_CHALLENGE_LATE_GRACE, 5 s) on its clock.
    expect(first.evidence.failure?.detail).toContain(
      `got no answer within ${first.evidence.deadlineMs + 5_000} ms`,
    );
    expect(first.evidence.elapsedMs).toBeNull();
    const statuses = ofProvider('gpu.verification-changed', liarId).map((e) =>
      (e.data as { gpus: { status: string }[] }).gpus.map((g) => g.status),
    );
    expect(statuses[0]).toEqual(['pending', 'pending']);
    await c.events.waitFor(
      () =>
        ofProvider('gpu.verification-changed', liarId).some((e) =>
          (e.data as { gpus: { status: string }[] }).gpus.some((g) => g.status === 'unverified'),
        ),
      { timeoutMs: 30_000, description: "the liar's GPU unverified" },
    );
    // Its benchmarks fail too (DEVICE_ABSENT: no GPU for torch), which also counts against it.
    const reliability = await c.events.waitFor(
      (e) =>
        e.type === 'provider.reliability-changed' &&
        (e.data as { providerId: string }).providerId === liarId &&
        (e.data as { cause: string }).cause === 'challenge-failed',
      { timeoutMs: 30_000 },
    );
    expect((reliability.data as { score: number }).score).toBeLessThan(0.8);

    // What the provider sees: unverified, and the evidence.
    const shown = await gpunet('providers', 'show', liarId);
    expect(shown).toContain('VERIFICATION');
    expect(shown).toMatch(/GPU 0 unverified: no-answer: .*got no answer within \d+ ms/);
    expect(shown).toMatch(/registration\s+0\s+failed\s+4096 fp16\s+—\/\d+\s+742\.1\s+no-answer/);

    // A job only H100s can serve waits, and its explanation names the challenge that failed.
    const h100Only = await submit(ddpJob('trust-h100-only', DEV, 'NTX', 2, ['H100 80GB']));
    await waitingBecause(h100Only, `verified GPUs required by subnet '${DEV}'`);
    const why = await gpunet('job', 'explain', h100Only);
    // GPU 0's reason: its failed challenge (GPU 1 has its own, or is still pending).
    expect(why).toContain(
      `verified-gpus/Unverified: unverified: challenge ${first.challengeId} failed (no-answer); verified GPUs required by subnet '${DEV}'`,
    );
    await cancel(h100Only);

    // Two GPUs of either class: the honest edges', never the liar's.
    const jobId = await submit(ddpJob('trust-either-class', DEV, 'NTX', 2, ['RTX 4090', 'H100 80GB']));
    const end = await jobEnded(c, jobId, explain, 180_000);
    expect(end.type, explain(jobId)).toBe('job.completed');
    const placements = c.events.items
      .filter((e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === jobId)
      .flatMap((e) =>
        (e.data as PayloadOf<typeof JobPlaced>).allocations.flatMap((a) => a.nodes.map((n) => n.providerId)),
      );
    expect(placements.length).toBeGreaterThan(0);
    expect(placements).not.toContain(liarId);
    for (const p of placements) expect(honest.map((e) => e.edgeId)).toContain(p);
    const settled = await c.events.waitFor(
      (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === jobId,
      { timeoutMs: 60_000 },
    );
    expect(settled.data).toMatchObject({ outcome: 'completed' });
  }, 300_000);

  it('2. a job in a subnet of real value never lands on simulated GPUs nor host processes; such a subnet cannot allow them', async () => {
    const jobId = await submit(ddpJob('trust-real-value', REAL, 'USDC', 2, ['RTX 4090']));
    await waitingBecause(jobId, `simulated GPUs refused by subnet '${REAL}'`);
    const why = await gpunet('job', 'explain', jobId);
    expect(why).toContain(`simulated-gpus/SimulatedRefused: simulated GPUs refused by subnet '${REAL}'`);
    // Its only edge runs the process runtime, below the subnet's minimum: refused on that count too
    // (the explanation counts each GPU under the first filter that refuses it: simulated-gpus).
    expect(await gpunet('providers', 'show', gamma.edgeId)).toMatch(/^ {2}isolation host-process: /m);
    const real = (await (await api(`/v1/subnets/${REAL}`)).json()) as {
      parameters: { trust: { minimumIsolation: string } };
    };
    expect(real.parameters.trust.minimumIsolation).toBe('container');
    expect(
      c.events.items.some((e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === jobId),
    ).toBe(false);
    await cancel(jobId);

    // A USDC subnet that allows simulated GPUs: refused by settlement, the field named to its requester.
    const res = await api('/v1/subnets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        subnetId: 'trust-real-sim',
        asset: 'USDC',
        stake: OWNER_STAKE.toString(),
        parameters: devSubnetParameters(RTX, PRICE_PER_GPU_HOUR),
      }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    await c.events.waitFor(
      (e) =>
        e.type === 'subnet.request-rejected' &&
        (e.data as { subnetId: string }).subnetId === 'trust-real-sim',
      { timeoutMs: 30_000 },
    );
    const view = await api('/v1/subnets/trust-real-sim');
    expect(view.status).toBe(404);
    expect(((await view.json()) as { detail: string }).detail).toContain(
      "parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; USDC does",
    );

    // A USDC subnet that refuses simulated GPUs but accepts host processes: refused, the field named.
    const dev = devSubnetParameters(RTX, PRICE_PER_GPU_HOUR);
    const hosts = await api('/v1/subnets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        subnetId: 'trust-real-host',
        asset: 'USDC',
        stake: OWNER_STAKE.toString(),
        parameters: { ...dev, trust: { ...dev.trust, simulatedGpus: 'refused' } },
      }),
    });
    expect(hosts.status, await hosts.clone().text()).toBe(202);
    await c.events.waitFor(
      (e) =>
        e.type === 'subnet.request-rejected' &&
        (e.data as { subnetId: string }).subnetId === 'trust-real-host',
      { timeoutMs: 30_000 },
    );
    const hostView = await api('/v1/subnets/trust-real-host');
    expect(hostView.status).toBe(404);
    expect(((await hostView.json()) as { detail: string }).detail).toContain(
      "parameters.trust.minimumIsolation: 'host-process' only in a subnet whose asset settles no real value; USDC does",
    );
  }, 120_000);
});
