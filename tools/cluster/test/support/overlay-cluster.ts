import { type JobPlaced, type PayloadOf } from '@gpunet/contracts';
import { type NormalizedSpec, parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { buildInternet, type Internet, type InternetSpec, Testbed } from '@gpunet/netns-testbed';
import { generateAdmissionKeys } from '@gpunet/overlay';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  type ControlPlaneService,
  NamespaceBridge,
  ServiceProcess,
  type SimulatedEdge,
  type SimulatedEdgeOptions,
  startSimulatedEdge,
} from '../../src';
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

/** A provider of an overlay cluster: the testbed host its edge runs on, its GPUs and its floor. */
export interface OverlayProvider {
  /** A host of the cluster's internet; also the edge's name. */
  readonly host: string;
  /** Its simulated RTX 4090s. Default 2. */
  readonly gpus?: number;
  /** Its floor per GPU-hour (`SimulatedEdgeOptions.floorPerGpuHour`). Default the edge's. */
  readonly floorPerGpuHour?: string;
}

export interface OverlayClusterOptions {
  readonly tenantId: string;
  readonly edgeArgs: readonly string[];
  /** How the edges run ranks (`SimulatedEdgeOptions.runtime`). Default `process`. */
  readonly runtime?: SimulatedEdgeOptions['runtime'];
  /**
   * The sites (and WAN) the providers sit in; a public `relay` host is added. Default: sites `a`
   * and `b`, each one host (`alpha`, `beta`) behind its own symmetric NAT, no WAN.
   */
  readonly internet?: Pick<InternetSpec, 'sites' | 'wan'>;
  /** Default: one provider per host of `internet`, 2 GPUs each. */
  readonly providers?: readonly OverlayProvider[];
  /** Extra environment per service, over the overlay cluster's own. */
  readonly env?: Partial<Record<ControlPlaneService, Record<string, string>>>;
  /** Start the gateway too (on loopback, an admin key) and give the tenant an API key. */
  readonly gateway?: boolean;
}

/** The gateway of an overlay cluster and the tenant's key (`read`, `submit`). */
export interface ClusterGateway {
  readonly url: string;
  readonly tenantKey: string;
}

/**
 * Simulated providers behind NATs (default: alpha and beta, two RTX 4090s each, each behind its
 * own symmetric NAT — no direct path between them can be punched) with a relay in public, and the
 * control plane with execution on EXECUTION_NETWORK=overlay. The edges enter their host's
 * namespace with `nsenter --net` (not `ip netns exec`): the rank namespaces they create must be
 * visible machine-wide.
 */
export interface OverlayCluster {
  readonly c: ClusterUnderTest;
  readonly net: Internet;
  readonly relay: ServiceProcess;
  /** In the order of `providers`. */
  readonly edges: readonly SimulatedEdge[];
  /** Each edge's start of its rank namespaces' names (the testbed's, swept with it). */
  readonly netnsPrefixes: readonly string[];
  /** With `gateway`. */
  readonly gateway: ClusterGateway | undefined;
  /** The edge of a provider's host. */
  edge(host: string): SimulatedEdge;
  /** The job's events and the last lines of every process, for assertion messages. */
  explain(jobId: string): string;
  close(): Promise<void>;
}

const DEFAULT_INTERNET: Pick<InternetSpec, 'sites'> = {
  sites: [
    { name: 'a', nat: 'symmetric', hosts: ['alpha'] },
    { name: 'b', nat: 'symmetric', hosts: ['beta'] },
  ],
};

export const startOverlayCluster = async (
  label: string,
  options: OverlayClusterOptions,
): Promise<OverlayCluster> => {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const f of closers.reverse()) await f().catch(() => undefined);
  };
  try {
    const internet = options.internet ?? DEFAULT_INTERNET;
    const providers =
      options.providers ?? internet.sites.flatMap((s) => s.hosts.map((host): OverlayProvider => ({ host })));
    const tb = await Testbed.create(label);
    closers.push(() => tb.destroy());
    const net = await buildInternet(tb, { ...internet, public: ['relay'] });
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
    const adminKey = `gpn_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
    const c = await startCluster(
      label,
      [
        'settlement',
        'discovery',
        'benchmarking',
        'scheduler',
        'execution',
        ...(options.gateway ? (['gateway'] as const) : []),
      ],
      {
        ...options.env,
        execution: {
          EXECUTION_USAGE_PERIOD: '2s',
          EXECUTION_START_BARRIER: '3m',
          EXECUTION_TICK: '500ms',
          // Attach and connect (STUN, the probe window, the relay) take longer than a rank command.
          EXECUTION_EDGE_TIMEOUT: '10s',
          EXECUTION_NETWORK: 'overlay',
          EXECUTION_OVERLAY_RELAYS: `relay-1=${net.host('relay').address}:${RELAY_PORT}/${STUN_PORTS.join('+')}`,
          EXECUTION_OVERLAY_ADMISSION_KEY_FILE: join(keyDir, 'admission.key'),
          ...options.env?.execution,
        },
        ...(options.gateway
          ? {
              gateway: {
                GATEWAY_PORT: '0',
                GATEWAY_HOST: '127.0.0.1',
                GATEWAY_ADMIN_KEY: adminKey,
                ...options.env?.gateway,
              },
            }
          : {}),
      },
    );
    closers.push(() => c.close());
    // NATS (the machine's own) reaches each host through a forwarder on its loopback, NAT or not.
    const bridge = await NamespaceBridge.open(`${label}-${process.pid}`, { host: '127.0.0.1', port: 4222 });
    closers.push(() => bridge.close());
    // Rank namespaces are machine-wide: each edge gets its own prefix.
    const netnsPrefixes = providers.map((_, i) => `${tb.prefix}-${String.fromCharCode(97 + i)}`);
    const edges: SimulatedEdge[] = [];
    closers.push(async () => {
      for (const e of edges) await e.remove().catch(() => undefined);
    });
    for (const [i, p] of providers.entries()) {
      const ns = net.host(p.host).ns;
      await bridge.into(ns, 4222);
      edges.push(
        await startSimulatedEdge({
          name: p.host,
          inventory: rtxHost(p.host, p.gpus),
          subnets: [SUBNET],
          natsUrl: 'nats://127.0.0.1:4222',
          prefix: c.nats.prefix,
          netns: ns,
          enter: 'nsenter',
          overlay: { netnsPrefix: netnsPrefixes[i]! },
          ...(p.floorPerGpuHour === undefined ? {} : { floorPerGpuHour: p.floorPerGpuHour }),
          ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
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
    const gateway = options.gateway ? await gatewayWithTenantKey(c, adminKey, options.tenantId) : undefined;
    const explain = (jobId: string): string =>
      [
        JSON.stringify(
          c.events.items
            .filter(
              (e) => (e.data as { jobId?: string }).jobId === jobId && !e.type.startsWith('edge.rank-log'),
            )
            .map((e) => [e.type, e.data]),
        ).slice(0, 6000),
        ...[
          c.cluster.service('scheduler'),
          c.cluster.service('execution'),
          relay,
          ...edges.map((e) => e.process),
        ].map((p) => `--- ${p.name}\n${p.output.split('\n').slice(-25).join('\n')}`),
      ].join('\n');
    const edge = (host: string): SimulatedEdge => {
      const found = edges.find((e) => e.name === host);
      if (!found) throw new Error(`no provider on host ${host}`);
      return found;
    };
    return { c, net, relay, edges, netnsPrefixes, gateway, edge, explain, close };
  } catch (error) {
    await close();
    throw error;
  }
};

/** The gateway's address (from its start line) and a new API key of the tenant. */
const gatewayWithTenantKey = async (
  c: ClusterUnderTest,
  adminKey: string,
  tenantId: string,
): Promise<ClusterGateway> => {
  const url = /"url":"([^"]+)"/.exec(c.cluster.service('gateway').output)?.[1];
  if (!url) throw new Error('the gateway did not say where it listens');
  const created = await fetch(`${url}/v1/admin/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId, scopes: ['read', 'submit'], name: 'overlay-cluster' }),
  });
  if (!created.ok)
    throw new Error(`creating the tenant's API key: ${created.status} ${await created.text()}`);
  const { key } = (await created.json()) as { key: string };
  return { url, tenantKey: key };
};

/** An example spec of docs/examples, parsed. */
export const exampleSpec = (file: string): NormalizedSpec => {
  const parsed = parseEnsembleSpec(readFileSync(join(ROOT, file), 'utf8'));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.spec;
};

/**
 * Submits the 4-rank DDP job and checks what the rank runtime and the job overlay promise of it:
 * placed across both providers (`expect.providers`, default every edge of the cluster), the
 * overlay's path between them as `expect.path` says (default `relayed`: two symmetric NATs), every
 * rank trained over the overlay (world size 4, the loss fell), the ranks launched at their hosts'
 * overlay addresses with rank 0's as MASTER_ADDR, usage metered per provider, and the job settled.
 * Without `job.spec` the job is taken as submitted already (through the gateway).
 */
export const runDdpJobThroughOverlay = async (
  oc: OverlayCluster,
  job: { readonly jobId: string; readonly tenantId: string; readonly spec?: NormalizedSpec },
  expected: { readonly providers?: readonly string[]; readonly path?: 'direct' | 'relayed' } = {},
): Promise<void> => {
  const { c, edges, explain } = oc;
  const JOB = job.jobId;
  const providers = expected.providers ?? edges.map((e) => e.edgeId);
  const path = expected.path ?? 'relayed';
  if (job.spec) await submitJob(c, { jobId: JOB, tenantId: job.tenantId, spec: job.spec, gpus: 4 });

  const end = await jobEnded(c, JOB, explain);
  expect(end.type, explain(JOB)).toBe('job.completed');

  // Placed across both providers.
  const placed = c.events.items.find(
    (e) => e.type === 'job.placed' && (e.data as { jobId: string }).jobId === JOB,
  )!.data as PayloadOf<typeof JobPlaced>;
  const nodes = placed.allocations.flatMap((a) => a.nodes);
  expect([...new Set(nodes.map((n) => n.providerId))].sort()).toEqual([...providers].sort());

  // The overlay's report: one pair of hosts, by the path expected.
  const paths = c.events.items.find(
    (e) => e.type === 'overlay.paths-reported' && (e.data as { jobId: string }).jobId === JOB,
  );
  expect(paths, explain(JOB)).toBeDefined();
  expect(paths!.data).toMatchObject({
    jobId: JOB,
    relayed: path === 'relayed' ? 1 : 0,
    direct: path === 'direct' ? 1 : 0,
    other: 0,
  });
  const pairs = (paths!.data as { pairs: { a: string; b: string; path: string }[] }).pairs;
  expect(pairs).toHaveLength(1);
  expect(pairs[0]!.path).toBe(path);

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
  await expectTrainedMeteredSettled(c, JOB, end, providers, explain);
};
