import {
  type Envelope,
  type PayloadOf,
  type JobCompleted,
  type JobFailed,
  type JobPlaced,
  GetNetworkEstimate,
  JobStatementQuery,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { type Netns, requireTestbed, Testbed } from '@gpunet/netns-testbed';
import { waitFor } from '@gpunet/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  awaitMeasurements,
  CLUSTER_BENCHMARKING_ENV,
  NamespaceBridge,
  rankProcessId,
  type SimulatedEdge,
  startSimulatedEdge,
} from '../src';
import {
  type ClusterUnderTest,
  jobEnded,
  openEconomy,
  expectTrainedMeteredSettled,
  rankJsonLines,
  rtxHost,
  startCluster,
  submitJob,
  SUBNET,
  providersOnline,
} from './support/cluster-fixture';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SPEC = 'docs/examples/15-multi-provider-ddp.yaml';

/*
 * The multi-provider end-to-end job: two simulated providers, each edge in its own network namespace with its own
 * address (routed directly on a test bridge), the control plane as separate processes on the host.
 * The 4-rank DDP example is submitted the way the gateway submits it → funded → placed across both
 * providers → every rank rendezvouses → trains → the loss falls → all exit 0 → `job.completed` with
 * usage per provider → settled. Benchmarking runs beside them: both providers are measured (their
 * simulated GPUs, and the link between their namespaces) before the first job.
 */
const ok = await requireTestbed('multi-provider job (end to end)');

describe.skipIf(!ok)('your first multi-provider job, end to end (namespaces, processes)', () => {
  let c: ClusterUnderTest;
  let tb: Testbed;
  let bridge: NamespaceBridge;
  const edges: SimulatedEdge[] = [];

  beforeAll(async () => {
    c = await startCluster('f6e2e', ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution'], {
      // A running rank's progress is recorded every heartbeat timeout / 4 (here 5 s): usage grows
      // while a job runs, not only at its end.
      execution: {
        EXECUTION_USAGE_PERIOD: '2s',
        EXECUTION_START_BARRIER: '2m',
        EXECUTION_TICK: '500ms',
        EXECUTION_HEARTBEAT_TIMEOUT: '20s',
      },
      // The edges beat every second: five silent seconds is an edge lost, not a slow one.
      discovery: { LIVENESS_WINDOW: '5s', LIVENESS_SWEEP_INTERVAL: '1s' },
    });
    tb = await Testbed.create('f6e2e');
    const core = await tb.namespace('core');
    await tb.bridge(core, 'br0');
    bridge = await NamespaceBridge.open(`f6e2e-${process.pid}`, { host: '127.0.0.1', port: 4222 });
    const hosts: Netns[] = [];
    for (const [i, name] of ['alpha', 'beta'].entries()) {
      const ns = await tb.namespace(name);
      await tb.link(core, `v${i}`, ns, 'eth0');
      await tb.attach(core, `v${i}`, 'br0');
      await ns.addAddress('eth0', `10.79.0.${10 + i}/24`);
      await ns.up('eth0');
      await bridge.into(ns, 4222);
      hosts.push(ns);
    }
    for (const [i, name] of ['alpha', 'beta'].entries())
      edges.push(
        await startSimulatedEdge({
          name,
          inventory: rtxHost(name),
          subnets: [SUBNET],
          natsUrl: 'nats://127.0.0.1:4222',
          prefix: c.nats.prefix,
          netns: hosts[i]!,
          extraArgs: ['--job-files', ROOT],
        }),
      );
    await openEconomy(
      c,
      'tenant-e2e',
      edges.map((e) => e.edgeId),
    );
    await providersOnline(
      c,
      edges.map((e) => e.edgeId),
    );
  }, 300_000);

  afterAll(async () => {
    for (const e of edges) await e.remove().catch(() => undefined);
    await bridge?.close();
    await tb?.destroy();
    await c?.close();
  }, 120_000);

  /**
   * Where a job stands, for a failed expectation: its events one per line (a spec is left out), the
   * last capacity events (what the scheduler was woken by) and the last lines of the services.
   */
  const explain = (jobId: string): string => {
    const line = (e: Envelope) => {
      const { spec: _spec, ...data } = e.data as { spec?: unknown };
      return `${e.occurredAt} ${e.type} ${JSON.stringify(data).slice(0, 600)}`;
    };
    return [
      '--- events of the job',
      ...c.events.items
        .filter(
          (e) =>
            (e.data as { jobId?: string }).jobId === jobId &&
            // The ranks' output and their once-a-second status are the edges' to tell.
            e.type !== 'edge.rank-log' &&
            e.type !== 'edge.rank-status',
        )
        .map(line),
      '--- the last capacity events',
      ...c.events.items
        .filter((e) => e.type.startsWith('provider.'))
        .slice(-8)
        .map(line),
      ...[
        c.cluster.service('execution'),
        c.cluster.service('scheduler'),
        c.cluster.service('discovery'),
        ...edges.map((e) => e.process),
      ].map((p) => `--- ${p.name}\n${p.output.split('\n').slice(-20).join('\n')}`),
    ].join('\n');
  };

  /** The spec with a longer training run (so that a rank or a service can be killed mid-run). */
  const longSpec = (steps = 3000) => {
    const parsed = parseEnsembleSpec(readFileSync(join(ROOT, SPEC), 'utf8'));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const spec = structuredClone(parsed.spec);
    const a = spec.allocations[0]!;
    a.execution.cmd = a.execution.cmd.map((arg, i, all) => (all[i - 1] === '--steps' ? String(steps) : arg));
    return spec;
  };

  const endOf = (jobId: string) => jobEnded(c, jobId, explain);

  /** Runs `wait`; when it fails, the error says where the job and the services stood. */
  const withExplanation = async <T>(jobId: string, wait: () => Promise<T>): Promise<T> => {
    try {
      return await wait();
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${explain(jobId)}`, {
        cause: error,
      });
    }
  };

  /** Stdout lines of a job's ranks as JSON, with the attempt they belong to. */
  const rankLines = (jobId: string) => rankJsonLines(c, jobId);

  /** Waits for rank 2 of `jobId` to train (a step line); true once it does. */
  const rank2Training = (jobId: string) =>
    withExplanation(jobId, () =>
      waitFor(() => rankLines(jobId).some((l) => l['rank'] === 2 && l['event'] === 'step'), {
        timeoutMs: 180_000,
        description: 'rank 2 training',
      }),
    );

  /** Sends `signal` to a job's rank process on this machine (`training`: it was seen training). */
  const signalTrainingRank = (jobId: string, rank: number, signal: NodeJS.Signals, training: boolean) => {
    const pid = rankProcessId(jobId, rank);
    expect(training && pid, `rank ${rank} trains on this machine`).toBeTruthy();
    process.kill(pid!, signal);
  };

  /**
   * The job completed after one restart: attempt 2 trained on all four ranks, each once, and attempt
   * 1 never finished. Returns the end and the restart's payload.
   */
  const completedAfterRestart = async (jobId: string) => {
    const end = await endOf(jobId);
    expect(end.type, explain(jobId)).toBe('job.completed');
    const restart = c.events.items.find(
      (e) => e.type === 'job.restarting' && (e.data as { jobId: string }).jobId === jobId,
    )?.data;
    const done = rankLines(jobId).filter((l) => l['event'] === 'done');
    expect(
      done
        .filter((d) => d.attempt === 2)
        .map((d) => d['rank'])
        .sort(),
    ).toEqual([0, 1, 2, 3]);
    expect(done.filter((d) => d.attempt === 1)).toEqual([]);
    return { end, restart };
  };

  it('benchmarking measures both providers: simulated profiles, the link between them, the network query', async () => {
    const ids = edges.map((e) => e.edgeId);
    const measured = await awaitMeasurements(c.nats.nc, c.nats.prefix, ids, {
      links: true,
      timeoutMs: 60_000,
    });
    for (const id of ids) {
      const profile = measured.profiles.get(id)!;
      // Declared GPUs are never passed off as measured ones.
      expect(profile).toMatchObject({ simulated: true, reason: 'initial', profile: { kind: 'simulated' } });
      expect(profile.profile.devices.map((d) => d.kind)).toEqual(['simulated', 'simulated']);
      expect(profile.profile.devices.every((d) => (d.matmulTflops.fp16 ?? 0) > 0)).toBe(true);
    }
    // Probed directly between the namespaces' addresses, over one bridge on this machine.
    const link = measured.links[0]!;
    expect([link.a, link.b].sort()).toEqual([...ids].sort());
    expect(link.path).toBe('direct');
    expect(link.rttUs).toBeGreaterThan(0);
    expect(link.rttUs).toBeLessThan(50_000);
    expect(link.sameSite).toBe(link.rttUs < Number(CLUSTER_BENCHMARKING_ENV['LAN_RTT_US']));

    // What the scheduler reads: the measured link (a later probe cycle may have renewed it).
    const network = await askQuery(
      c.nats.nc,
      GetNetworkEstimate,
      { hostIds: ids },
      { prefix: c.nats.prefix, timeoutMs: 10_000 },
    );
    expect(network.links.map((l) => [l.a, l.b].sort().join(' '))).toContain([...ids].sort().join(' '));
  }, 120_000);

  it('trains 4 DDP ranks across both providers; the loss falls; usage per provider; settled', async () => {
    const parsed = parseEnsembleSpec(readFileSync(join(ROOT, SPEC), 'utf8'));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const jobId = 'job-e2e-ddp';
    await submitJob(c, { jobId, tenantId: 'tenant-e2e', spec: parsed.spec, gpus: 4 });

    const end = await jobEnded(c, jobId, explain, 240_000);
    expect(end.type, explain(jobId)).toBe('job.completed');

    // Placed across both providers, two ranks each.
    const placed = c.events.items.find((e) => e.type === 'job.placed')!.data as PayloadOf<typeof JobPlaced>;
    const nodes = placed.allocations.flatMap((a) => a.nodes);
    expect(nodes.map((n) => n.providerId).sort()).toEqual(edges.map((e) => e.edgeId).sort());

    // Every rank trained (the loss fell), usage per provider (2 GPUs each), and settlement paid for it.
    await expectTrainedMeteredSettled(
      c,
      jobId,
      end,
      edges.map((e) => e.edgeId),
      explain,
    );
    // The tenant's statement shows every leg: escrow in, each provider's charge and the fees accrued
    // then posted, the rest refunded — and nothing left in escrow.
    const statement = await askQuery(
      c.nats.nc,
      JobStatementQuery,
      { jobId },
      { prefix: c.nats.prefix, timeoutMs: 10_000 },
    );
    expect(statement).toMatchObject({ status: 'settled', pending: '0', escrowBalance: '0' });
    const legs = statement.legs.map((l) => `${l.kind}:${l.code}`);
    expect(legs[0]).toBe('posted:escrow-fund');
    expect(legs.at(-1)).toBe('posted:refund');
    for (const code of ['usage-charge', 'fee-subnet', 'fee-platform'])
      expect(legs).toContain(`post-pending:${code}`);
    expect(
      new Set(
        statement.legs
          .filter((l) => l.code === 'usage-charge')
          .map((l) => l.creditAccountId.split(':').at(-1)),
      ),
    ).toEqual(new Set(edges.map((e) => e.edgeId)));
    expect(BigInt(statement.funded)).toBe(
      BigInt(statement.paidToProviders) +
        BigInt(statement.subnetFees) +
        BigInt(statement.platformFees) +
        BigInt(statement.refunded),
    );
  }, 360_000);
  it('a rank killed mid-run: every rank restarts as attempt 2 (restart_all) and the job completes', async () => {
    const jobId = 'job-e2e-rank-killed';
    await submitJob(c, { jobId, tenantId: 'tenant-e2e', spec: longSpec(), gpus: 4 });
    signalTrainingRank(jobId, 2, 'SIGKILL', await rank2Training(jobId));

    const { end, restart } = await completedAfterRestart(jobId);
    expect(restart).toMatchObject({ attempt: 2 });
    // Usage covers what ran on both providers, over both attempts.
    const completed = end.data as PayloadOf<typeof JobCompleted>;
    expect(completed.usage.map((u) => u.providerId).sort()).toEqual(edges.map((e) => e.edgeId).sort());
  }, 400_000);

  it('the execution service SIGKILLed mid-job and restarted: the job completes, no rank started twice', async () => {
    const jobId = 'job-e2e-execution-killed';
    await submitJob(c, { jobId, tenantId: 'tenant-e2e', spec: longSpec(), gpus: 4 });
    await withExplanation(jobId, () =>
      waitFor(() => rankLines(jobId).some((l) => l['event'] === 'step'), {
        timeoutMs: 180_000,
        description: 'the ranks training',
      }),
    );
    const execution = c.cluster.service('execution');
    await execution.kill();
    await execution.start();

    const end = await endOf(jobId);
    expect(end.type, explain(jobId)).toBe('job.completed');
    // One attempt, every rank finished exactly once: nothing was started a second time.
    const done = rankLines(jobId).filter((l) => l['event'] === 'done');
    expect(done.map((d) => `${String(d.attempt)}/${String(d['rank'])}`).sort()).toEqual([
      '1/0',
      '1/1',
      '1/2',
      '1/3',
    ]);
    expect(
      c.events.items.some(
        (e) => e.type === 'job.restarting' && (e.data as { jobId: string }).jobId === jobId,
      ),
    ).toBe(false);
  }, 400_000);

  it('a rank blocked in a collective: the progress timeout stops the hung gang, which restarts and completes', async () => {
    const jobId = 'job-e2e-rank-hung';
    const spec = longSpec();
    const a = spec.allocations[0]!;
    a.failureRecovery = { ...a.failureRecovery, progressTimeoutMs: 15_000 };
    await submitJob(c, { jobId, tenantId: 'tenant-e2e', spec, gpus: 4 });
    // Rank 2 stops dead: the other ranks block in their next all-reduce, and nobody prints.
    signalTrainingRank(jobId, 2, 'SIGSTOP', await rank2Training(jobId));

    const { end, restart } = await completedAfterRestart(jobId);
    expect(restart, explain(jobId)).toMatchObject({
      attempt: 2,
      reason: { code: 'RANK_HUNG', message: expect.stringContaining('failure_recovery.progress_timeout') },
    });
    // A hung rank is the job's own stall: no provider is at fault.
    expect((end.data as PayloadOf<typeof JobCompleted>).faults).toEqual([]);
  }, 400_000);

  it('usage past the escrow: settlement says escrow.exhausted, execution stops the job', async () => {
    const jobId = 'job-e2e-escrow-exhausted';
    // Escrow for 2 GPUs × 10 s while 4 GPUs run: usage outruns it within seconds, as a replacement
    // provider's would (the only way a job's usage can pass its escrow).
    await submitJob(c, {
      jobId,
      tenantId: 'tenant-e2e',
      spec: longSpec(100_000),
      gpus: 2,
      maxDurationSeconds: 10,
    });
    const end = await endOf(jobId);
    expect(end.type, explain(jobId)).toBe('job.failed');
    const failed = end.data as PayloadOf<typeof JobFailed>;
    expect(failed.reason).toMatchObject({
      code: 'ESCROW_EXHAUSTED',
      message: expect.stringMatching(
        /^the job used more than its escrow covers \(\d+ GPU-seconds unpaid\): stopped$/,
      ),
    });
    const exhausted = c.events.items.find(
      (e) => e.type === 'escrow.exhausted' && (e.data as { jobId: string }).jobId === jobId,
    );
    expect(exhausted, explain(jobId)).toBeDefined();
    expect(Date.parse(exhausted!.occurredAt)).toBeLessThanOrEqual(Date.parse(end.occurredAt));
    // The job was stopped: its ranks never finished training.
    expect(rankLines(jobId).filter((l) => l['event'] === 'done')).toEqual([]);
  }, 400_000);

  // Last: it leaves beta dead.
  it('a provider lost mid-job (its edge and ranks SIGKILLed): noticed within seconds, never relaunched onto', async () => {
    const jobId = 'job-e2e-provider-lost';
    await submitJob(c, { jobId, tenantId: 'tenant-e2e', spec: longSpec(), gpus: 4 });
    await withExplanation(jobId, () =>
      waitFor(() => rankLines(jobId).some((l) => l['event'] === 'step'), {
        timeoutMs: 180_000,
        description: 'the ranks training',
      }),
    );
    const beta = edges[1]!;
    const launching = c.events.items.find(
      (e) => e.type === 'job.launching' && (e.data as { jobId: string }).jobId === jobId,
    )!.data as { ranks: { rank: number; providerId: string }[] };
    const onBeta = launching.ranks.filter((r) => r.providerId === beta.edgeId).map((r) => r.rank);
    expect(onBeta.length, 'the gang spans both providers').toBeGreaterThan(0);
    // The host goes away: the edge first (it reports nothing more), then its ranks.
    const killedAt = Date.now();
    await beta.process.kill();
    for (const rank of onBeta) {
      const pid = rankProcessId(jobId, rank);
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    }

    const end = await endOf(jobId);
    expect(end.type, explain(jobId)).toBe('job.failed');
    const failed = end.data as PayloadOf<typeof JobFailed>;
    // Beta's offline either fails the running gang, or — when alpha's ranks, cut off from their
    // peers, failed first and a restart was due — stops that restart: no attempt runs without it.
    expect(failed.reason.code).toBe('RANK_LOST');
    expect(failed.reason.message).toMatch(
      new RegExp(`${beta.edgeId} went offline|cannot restart without ${beta.edgeId}, offline`),
    );
    expect(failed.reason.message).toContain('replace_failed_node is not supported yet');
    expect(failed.faults).toContainEqual(
      expect.objectContaining({
        providerId: beta.edgeId,
        kind: 'host-lost',
        verified: true,
        detail: expect.stringContaining(`discovery declared ${beta.edgeId} offline`),
      }),
    );
    // Discovery noticed within its 5 s window (and a sweep), not after the 2 min rank heartbeat.
    const offline = c.events.items.find(
      (e) => e.type === 'provider.offline' && (e.data as { providerId: string }).providerId === beta.edgeId,
    )!;
    const detectedMs = Date.parse(offline.occurredAt) - killedAt;
    expect(detectedMs, explain(jobId)).toBeLessThan(10_000);
    // No second attempt was launched onto the dead provider; the job ended within seconds of it.
    expect(
      c.events.items.filter(
        (e) => e.type === 'job.launching' && (e.data as { jobId: string }).jobId === jobId,
      ),
    ).toHaveLength(1);
    expect(Date.parse(end.occurredAt) - Date.parse(offline.occurredAt)).toBeLessThan(30_000);
  }, 400_000);
});
