import { type JobPlaced, type PayloadOf } from '@gpunet/contracts';
import { type NormalizedSpec, parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { buildInternet, type Internet, Testbed } from '@gpunet/netns-testbed';
import { generateAdmissionKeys } from '@gpunet/overlay';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { NamespaceBridge, ServiceProcess, type SimulatedEdge, startSimulatedEdge } from '../../src';
import {
  type ClusterUnderTest,
  jobEnded,
  openEconomy,
  providersOnline,
  expectTrainedMeteredSettled,
  rtxHost,
  startCluster,
  submitJob,
  SUBNET,
} from './cluster-fixture';

export const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const RELAY_PORT = 8443;
const STUN_PORTS = [3478, 3479];

/**
 * Two simulated providers (alpha, beta; two RTX 4090s each), each behind its own symmetric NAT — no
 * direct path between them can be punched — with a relay in public, and the control plane with
 * execution on EXECUTION_NETWORK=overlay. The edges enter their host's namespace with
 * `nsenter --net` (not `ip netns exec`): the rank namespaces they create must be visible machine-wide.
 */
export interface OverlayCluster {
  readonly c: ClusterUnderTest;
  readonly net: Internet;
  readonly relay: ServiceProcess;
  readonly edges: readonly SimulatedEdge[];
  /** Each edge's start of its rank namespaces' names (the testbed's, swept with it). */
  readonly netnsPrefixes: readonly string[];
  /** The job's events and the last lines of every process, for assertion messages. */
  explain(jobId: string): string;
  close(): Promise<void>;
}

export const startOverlayCluster = async (
  label: string,
  options: { readonly tenantId: string; readonly edgeArgs: readonly string[] },
): Promise<OverlayCluster> => {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const f of closers.reverse()) await f().catch(() => undefined);
  };
  try {
    const tb = await Testbed.create(label);
    closers.push(() => tb.destroy());
    const net = await buildInternet(tb, {
      sites: [
        { name: 'a', nat: 'symmetric', hosts: ['alpha'] },
        { name: 'b', nat: 'symmetric', hosts: ['beta'] },
      ],
      public: ['relay'],
    });
    const keys = generateAdmissionKeys();
    const relay = new ServiceProcess({
      name: 'relay',
      main: 'services/relay/src/main.ts',
      netns: net.host('relay').ns,
      env: {
        RELAY_ID: 'relay-1',
        RELAY_PORT: String(RELAY_PORT),
        RELAY_STUN_PORTS: STUN_PORTS.join(','),
        RELAY_VERIFY_KEYS: keys.verifyKey,
        METRICS_PORT: '9464',
      },
      ready: /relay started/,
    });
    closers.push(() => relay.stop());
    await relay.start();
    const keyDir = await mkdtemp(join(tmpdir(), `gpunet-${label}-`));
    closers.push(() => rm(keyDir, { recursive: true, force: true }));
    await writeFile(join(keyDir, 'admission.key'), `${keys.signingKey}\n`, { mode: 0o600 });
    const c = await startCluster(
      label,
      ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution'],
      {
        execution: {
          EXECUTION_USAGE_PERIOD: '2s',
          EXECUTION_START_BARRIER: '3m',
          EXECUTION_TICK: '500ms',
          // Attach and connect (STUN, the probe window, the relay) take longer than a rank command.
          EXECUTION_EDGE_TIMEOUT: '10s',
          EXECUTION_NETWORK: 'overlay',
          EXECUTION_OVERLAY_RELAYS: `relay-1=${net.host('relay').address}:${RELAY_PORT}/${STUN_PORTS.join('+')}`,
          EXECUTION_OVERLAY_ADMISSION_KEY_FILE: join(keyDir, 'admission.key'),
        },
      },
    );
    closers.push(() => c.close());
    // NATS (the machine's own) reaches each host through a forwarder on its loopback, NAT or not.
    const bridge = await NamespaceBridge.open(`${label}-${process.pid}`, { host: '127.0.0.1', port: 4222 });
    closers.push(() => bridge.close());
    // Rank namespaces are machine-wide: each edge gets its own prefix.
    const netnsPrefixes = [`${tb.prefix}-a`, `${tb.prefix}-b`];
    const edges: SimulatedEdge[] = [];
    closers.push(async () => {
      for (const e of edges) await e.remove().catch(() => undefined);
    });
    for (const [i, name] of ['alpha', 'beta'].entries()) {
      const ns = net.host(name).ns;
      await bridge.into(ns, 4222);
      edges.push(
        await startSimulatedEdge({
          name,
          inventory: rtxHost(name),
          subnets: [SUBNET],
          natsUrl: 'nats://127.0.0.1:4222',
          prefix: c.nats.prefix,
          netns: ns,
          enter: 'nsenter',
          overlay: { netnsPrefix: netnsPrefixes[i]! },
          extraArgs: options.edgeArgs,
        }),
      );
    }
    await openEconomy(
      c,
      options.tenantId,
      edges.map((e) => e.edgeId),
    );
    await providersOnline(
      c,
      edges.map((e) => e.edgeId),
    );
    const explain = (jobId: string): string =>
      [
        JSON.stringify(
          c.events.items
            .filter(
              (e) => (e.data as { jobId?: string }).jobId === jobId && !e.type.startsWith('edge.rank-log'),
            )
            .map((e) => [e.type, e.data]),
        ).slice(0, 6000),
        ...[c.cluster.service('execution'), relay, ...edges.map((e) => e.process)].map(
          (p) => `--- ${p.name}\n${p.output.split('\n').slice(-25).join('\n')}`,
        ),
      ].join('\n');
    return { c, net, relay, edges, netnsPrefixes, explain, close };
  } catch (error) {
    await close();
    throw error;
  }
};

/** An example spec of docs/examples, parsed. */
export const exampleSpec = (file: string): NormalizedSpec => {
  const parsed = parseEnsembleSpec(readFileSync(join(ROOT, file), 'utf8'));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.spec;
};

/**
 * Submits the 4-rank DDP job and checks what the rank runtime and the job overlay promise of it: placed across both providers,
 * the overlay's path between them relayed (both NATs symmetric), every rank trained over the overlay
 * (world size 4, the loss fell), the ranks launched at their hosts' overlay addresses with rank 0's
 * as MASTER_ADDR, usage metered per provider, and the job settled.
 */
export const runDdpJobThroughOverlay = async (
  oc: OverlayCluster,
  job: { readonly jobId: string; readonly tenantId: string; readonly spec: NormalizedSpec },
): Promise<void> => {
  const { c, edges, explain } = oc;
  const JOB = job.jobId;
  await submitJob(c, { jobId: JOB, tenantId: job.tenantId, spec: job.spec, gpus: 4 });

  const end = await jobEnded(c, JOB, explain);
  expect(end.type, explain(JOB)).toBe('job.completed');

  // Placed across both providers.
  const placed = c.events.items.find(
    (e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === JOB,
  )!.data as PayloadOf<typeof JobPlaced>;
  const nodes = placed.allocations.flatMap((a) => a.nodes);
  expect([...new Set(nodes.map((n) => n.providerId))].sort()).toEqual(edges.map((e) => e.edgeId).sort());

  // The overlay's report: one pair of hosts, relayed (two symmetric NATs: no direct path).
  const paths = c.events.items.find(
    (e) => e.type === 'overlay.paths-reported' && (e.data as { jobId: string }).jobId === JOB,
  );
  expect(paths, explain(JOB)).toBeDefined();
  expect(paths!.data).toMatchObject({ jobId: JOB, relayed: 1, direct: 0, other: 0 });
  const pairs = (paths!.data as { pairs: { a: string; b: string; path: string }[] }).pairs;
  expect(pairs).toHaveLength(1);
  expect(pairs[0]!.path).toBe('relayed');

  // The ranks were launched on the overlay: addresses in the job network, MASTER_ADDR rank 0's.
  const launching = c.events.items.find(
    (e) => e.type === 'job.launching' && (e.data as { jobId: string }).jobId === JOB,
  );
  expect(launching, explain(JOB)).toBeDefined();
  const ranks = (launching!.data as { ranks: { rank: number; providerId: string; address: string }[] }).ranks;
  expect(new Set(ranks.map((r) => r.address))).toEqual(new Set([pairs[0]!.a, pairs[0]!.b]));
  const rank0 = ranks.find((r) => r.rank === 0)!;
  expect(
    ranks.filter((r) => r.providerId === rank0.providerId).every((r) => r.address === rank0.address),
  ).toBe(true);

  // Every rank trained over the overlay (the loss fell), usage per provider, settled.
  await expectTrainedMeteredSettled(
    c,
    JOB,
    end,
    edges.map((e) => e.edgeId),
    explain,
  );
};
