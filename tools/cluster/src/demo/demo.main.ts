import { GetNetworkEstimate, JobStatementQuery } from '@gpunet/contracts';
import { askQuery, connectNats } from '@gpunet/eventing';
import { type Netns, REPO_ROOT, requireTestbed, Testbed, TestProcess } from '@gpunet/netns-testbed';
import type { NatsConnection } from '@nats-io/nats-core';
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { DevCluster } from '../dev-cluster';
import { openDevEconomy } from '../economy';
import { awaitMeasurements, type GpuProfileEvent } from '../measurements';
import { type SimulatedEdge, startSimulatedEdge } from '../edge-process';
import { NamespaceBridge } from '../namespace-bridge';

/*
 * The one-command demo (README): every gpunet service as its own process, three simulated providers
 * (each in its own network namespace when run as root), a funded tenant, and the 4-rank CPU Gloo
 * DDP example submitted through the REST gateway with the `gpunet` CLI, followed live to its end;
 * then the placement, the loss, the cost and the settlement statement. Before the job, what
 * benchmarking measured: each provider's GPUs (simulated ones say so) and the RTT of every pair of
 * providers (probed between their namespaces). Ctrl-C stops everything.
 */

const SPEC = 'docs/examples/15-multi-provider-ddp.yaml';
const PREFIX = 'demo';
const SUBNET = 'demo';
const ASSET = 'NTX';
const GPU_CLASS = 'RTX-4090';
const PRICE = 1_000_000n; // 1 NTX per GPU-hour
const TENANT = 'demo-tenant';

const { values: flags } = parseArgs({
  options: {
    providers: { type: 'string', default: '3' },
    'no-netns': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'no-job': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`npm run demo [-- --providers N] [--no-netns] [--keep] [--no-job]

Runs a whole gpunet cluster on this machine and one multi-provider training job through it.
  --providers N  simulated providers (2-5, default 3)
  --no-netns     providers on loopback even as root (default: own network namespaces as root)
  --keep         keep the cluster running afterwards and print the CLI's login (Ctrl-C stops it)
  --no-job       submit nothing (with --keep: a cluster for docs/running-jobs.md)
Needs NATS with JetStream (NATS_URL, default nats://127.0.0.1:4222) and PostgreSQL (DATABASE_URL,
default postgres://postgres@127.0.0.1:5432/test); scripts/ensure-services.sh starts both.
`);
  process.exit(0);
}

const started = Date.now();
const say = (text: string): void => {
  process.stdout.write(`[demo +${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`);
};

const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

const reachable = (url: string, fallbackPort: number): Promise<boolean> =>
  new Promise((resolve) => {
    const u = new URL(url.replace(/^(nats|tls|postgres(ql)?):/, 'http:'));
    const socket = tcpConnect({ host: u.hostname, port: Number(u.port || fallbackPort) });
    socket.setTimeout(2_000, () => socket.destroy());
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });

const cleanups: (() => Promise<void>)[] = [];
let stopping = false;
const shutdown = async (code: number): Promise<never> => {
  if (!stopping) {
    stopping = true;
    say('stopping every process');
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  }
  process.exit(code);
};
process.once('SIGINT', () => void shutdown(130));
process.once('SIGTERM', () => void shutdown(143));

const main = async (): Promise<number> => {
  if (!(await reachable(NATS_URL, 4222)) || !(await reachable(DATABASE_URL, 5432))) {
    process.stderr.write(
      `NATS (${NATS_URL}) or PostgreSQL (${DATABASE_URL}) does not answer.\n` +
        'Start both with:  bash scripts/ensure-services.sh   (or set NATS_URL / DATABASE_URL)\n',
    );
    return 2;
  }

  // A fresh demo every time: the previous run's schemas and streams go.
  const pg = new Client({ connectionString: DATABASE_URL });
  await pg.connect();
  const services = ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution', 'gateway'] as const;
  for (const s of services) await pg.query(`DROP SCHEMA IF EXISTS "${PREFIX}_${s}" CASCADE`);
  await pg.end();
  const nats = await connectNats({ servers: NATS_URL, name: 'gpunet-demo' });
  cleanups.push(() => nats.nc.close());
  for await (const stream of nats.jsm.streams.list())
    if (stream.config.name.startsWith(`${PREFIX}_`)) await nats.jsm.streams.delete(stream.config.name);

  const adminKey = `gpn_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  say(`starting ${services.join(', ')} (each its own process)`);
  const cluster = await DevCluster.start({
    databaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    prefix: PREFIX,
    schemaPrefix: PREFIX,
    services,
    env: {
      gateway: { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_KEY: adminKey },
      execution: { EXECUTION_USAGE_PERIOD: '5s' },
    },
  });
  cleanups.push(() => cluster.stop());
  const gatewayUrl = /"url":"([^"]+)"/.exec(cluster.service('gateway').output)?.[1];
  if (!gatewayUrl) throw new Error('the gateway did not say where it listens');
  say(`gateway at ${gatewayUrl}`);

  // Providers: each in its own network namespace (own address, own network) when we are root.
  const count = Math.max(2, Number(flags.providers));
  const names = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].slice(0, count);
  const useNetns = !flags['no-netns'] && (await requireTestbed('demo providers').catch(() => false));
  const hosts: (Netns | undefined)[] = [];
  if (useNetns) {
    const tb = await Testbed.create('demo');
    cleanups.push(() => tb.destroy());
    const core = await tb.namespace('core');
    await tb.bridge(core, 'br0');
    const bridge = await NamespaceBridge.open(`demo-${process.pid}`, {
      host: '127.0.0.1',
      port: Number(new URL(NATS_URL.replace(/^nats:/, 'http:')).port || 4222),
    });
    cleanups.push(() => bridge.close());
    for (const [i, name] of names.entries()) {
      const ns = await tb.namespace(name);
      await tb.link(core, `v${i}`, ns, 'eth0');
      await tb.attach(core, `v${i}`, 'br0');
      await ns.addAddress('eth0', `10.88.0.${10 + i}/24`);
      await ns.up('eth0');
      await bridge.into(ns, 4222);
      hosts.push(ns);
    }
  }
  const edges: SimulatedEdge[] = [];
  for (const [i, name] of names.entries()) {
    const ns = hosts[i];
    const edge = await startSimulatedEdge({
      name,
      inventory: `uuid_prefix: SIM-${name}\ngpus:\n  - { model: NVIDIA GeForce RTX 4090, count: 2, vram: 24GiB, compute_capability: "8.9", cuda_version: "12.4" }\nhost: { cpu_cores: 16, memory: 64GiB }\n`,
      subnets: [SUBNET],
      natsUrl: ns ? 'nats://127.0.0.1:4222' : NATS_URL,
      prefix: PREFIX,
      extraArgs: ['--job-files', REPO_ROOT],
      ...(ns ? { netns: ns } : {}),
    });
    cleanups.push(() => edge.remove());
    edges.push(edge);
    say(
      `provider ${name}: 2 simulated RTX 4090 (labelled simulated)${ns ? `, own namespace 10.88.0.${10 + i}` : ', loopback'} — ${edge.edgeId.slice(0, 12)}…`,
    );
  }

  say(`funding ${TENANT} on the simulated chain; subnet "${SUBNET}" at 1 NTX per GPU-hour`);
  await openDevEconomy(nats.nc, PREFIX, {
    subnetId: SUBNET,
    asset: ASSET,
    gpuClass: GPU_CLASS,
    pricePerGpuHour: PRICE,
    tenantId: TENANT,
    tenantDeposit: 100_000_000n,
    providerIds: edges.map((e) => e.edgeId),
  });

  await showMeasurements(nats.nc, new Map(edges.map((e) => [e.edgeId, e.name])), useNetns);

  const created = await fetch(`${gatewayUrl}/v1/admin/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenantId: TENANT, scopes: ['read', 'submit'], name: 'demo' }),
  });
  if (!created.ok)
    throw new Error(`creating the tenant's API key: ${created.status} ${await created.text()}`);
  const { key } = (await created.json()) as { key: string };

  if (flags['no-job']) return keepRunning(gatewayUrl, key, 0);
  say(`gpunet job submit ${SPEC} --follow`);
  const cli = new TestProcess('gpunet', [join(REPO_ROOT, 'bin/gpunet'), 'job', 'submit', SPEC, '--follow'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      GPUNET_GATEWAY: gatewayUrl,
      GPUNET_API_KEY: key,
      GPUNET_CONFIG: join(tmpdir(), `gpunet-demo-${process.pid}.json`),
    },
  });
  cli.onStdout((chunk) => process.stdout.write(chunk));
  const exit = await cli.exited;
  if (cli.stderr) process.stderr.write(cli.stderr);
  const jobId = /^submitted job (\S+)/m.exec(cli.stdout)?.[1];
  if (jobId) {
    const st = await askQuery(nats.nc, JobStatementQuery, { jobId }, { prefix: PREFIX, timeoutMs: 10_000 });
    const ntx = (minor: string): string => `${(Number(minor) / 1e6).toFixed(6)} ${ASSET}`;
    say(`settlement statement of job ${jobId} (${st.status}):`);
    process.stdout.write(
      [
        `  escrowed            ${ntx(st.funded)}`,
        `  paid to providers   ${ntx(st.paidToProviders)}`,
        `  subnet fees         ${ntx(st.subnetFees)}`,
        `  platform fees       ${ntx(st.platformFees)}`,
        `  refunded to tenant  ${ntx(st.refunded)}`,
        `  ledger              ${st.legs.length} legs, every one balanced (gpunet job statement ${jobId})`,
        '',
      ].join('\n'),
    );
  }
  say(
    exit.code === 0 ? 'the job completed' : `the job did not complete (gpunet exited ${String(exit.code)})`,
  );
  return keepRunning(gatewayUrl, key, exit.code === 0 ? 0 : 1);
};

/** How a profile came about, said plainly: a simulated edge's figures are declared, not measured. */
const provenance = (p: GpuProfileEvent): string =>
  p.profile.kind === 'simulated'
    ? 'simulated: the declared model’s figures, not a measurement'
    : `measured on the ${p.profile.kind === 'gpu' ? 'GPUs' : 'CPU'} (${p.profile.runner.backend})`;

const tflops = (value: number | null): string => (value === null ? 'n/a' : value.toFixed(1));

/**
 * Waits for benchmarking to have measured every provider (and, when they have addresses of their
 * own, every pair's link) and prints one line per provider and per pair.
 */
const showMeasurements = async (
  nc: NatsConnection,
  names: ReadonlyMap<string, string>,
  links: boolean,
): Promise<void> => {
  say(`benchmarking measures the providers${links ? ' and the links between them' : ''}`);
  const measured = await awaitMeasurements(nc, PREFIX, [...names.keys()], { links, timeoutMs: 90_000 });
  for (const [id, name] of names) {
    const p = measured.profiles.get(id)!;
    const devices = p.profile.devices;
    const models = [...new Set(devices.map((d) => d.name))].join(', ');
    say(
      `benchmarked ${name}: ${devices.length} × ${models}, fp16 ${devices.map((d) => tflops(d.matmulTflops.fp16)).join(' / ')} TFLOPS, fp32 ${devices.map((d) => tflops(d.matmulTflops.fp32)).join(' / ')} TFLOPS (${provenance(p)})`,
    );
  }
  if (!links) {
    say(
      'links not probed: providers on loopback share this machine’s addresses (run as root for namespaces)',
    );
    return;
  }
  const network = await askQuery(
    nc,
    GetNetworkEstimate,
    { hostIds: [...names.keys()] },
    { prefix: PREFIX, timeoutMs: 10_000 },
  );
  const ids = [...names.keys()];
  for (const [i, a] of ids.entries())
    for (const b of ids.slice(i + 1)) {
      const pair = network.links.filter((l) => (l.a === a && l.b === b) || (l.a === b && l.b === a));
      const rttUs = Math.min(...pair.map((l) => l.rttUs));
      const rates = pair
        .filter((l) => l.throughputBitsPerSecond !== null)
        .map(
          (l) =>
            `${names.get(l.a)} → ${names.get(l.b)} ${(l.throughputBitsPerSecond! / 1e9).toFixed(2)} Gbit/s`,
        );
      say(
        `link ${names.get(a)} ↔ ${names.get(b)}: RTT ${(rttUs / 1000).toFixed(3)} ms, measured (${pair[0]!.path} probe)${rates.length > 0 ? `; ${rates.join(', ')}` : ''}${pair.some((l) => l.sameSite) ? '; one site' : ''}`,
      );
    }
};

/** With `--keep`, prints how to use the cluster and waits for Ctrl-C; otherwise returns `code`. */
const keepRunning = async (gatewayUrl: string, key: string, code: number): Promise<number> => {
  if (!flags.keep) return code;
  say('ready: the cluster keeps running. In another shell:');
  process.stdout.write(`  export GPUNET_GATEWAY=${gatewayUrl}\n  export GPUNET_API_KEY=${key}\n`);
  say('Ctrl-C stops everything');
  return new Promise<number>(() => undefined);
};

main().then(
  (code) => shutdown(code),
  (error: unknown) => {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return shutdown(1);
  },
);
