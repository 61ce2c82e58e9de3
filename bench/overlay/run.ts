/**
 * bench/overlay — what the job overlay costs, on one testbed of network namespaces, in one run:
 *
 *   npm run bench:overlay [-- --rounds 3 --seconds 3 --numel 4194304 --iters 5]      (as root)
 *
 * Two hosts on the public segment of `buildInternet` (veth + bridge), a relay beside them, and a
 * rank namespace per host. Four paths between the hosts (or their ranks):
 *   veth            the underlay itself, host to host
 *   wg-p2p          wireguard-go point to point, configured statically over UAPI (the baseline)
 *   overlay-direct  the job overlay (`JobOverlay` in an agent per host): probes, hand-off, direct path
 *   overlay-relayed the job overlay forced through the relay (`forceRelay`): UDP shims + TCP relay
 * Each gets `--rounds` iperf3 runs of one TCP stream for `--seconds` (rounds interleave the paths;
 * the median is kept) and a 2-rank Gloo all-reduce of `--numel` float32 (median of `--iters`). Prints a table and the ratios against wg-p2p (goals: overlay-direct ≥ 60 %,
 * overlay-relayed ≥ 40 %) and writes bench/overlay/results.json. Every process runs on this
 * machine's shared cores, so the numbers are CPU cost, not wire speed.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  buildInternet,
  glooAllReduceArgv,
  type Netns,
  requireTestbed,
  Testbed,
  tsxArgv,
  tsxEnv,
} from '@gpunet/netns-testbed';
import {
  generateAdmissionKeys,
  generateKeyPair,
  issueAdmissionToken,
  OVERLAY_AGENT_MAIN,
  OverlayAgentClient,
  uapiSet,
} from '@gpunet/overlay';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    numel: { type: 'string', default: String(4 * 1024 * 1024) },
    iters: { type: 'string', default: '5' },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const NUMEL = Number(values.numel);
const ITERS = Number(values.iters);

interface PathResult {
  path: string;
  tcpGbps: number;
  tcpRetransmits: number;
  allReduceMs: number;
}

/** One iperf3 TCP stream from `client` to `server`'s `address`, bounded by `SECONDS`. */
const iperf = async (
  server: Netns,
  client: Netns,
  address: string,
): Promise<{ gbps: number; retransmits: number }> => {
  const listener = server.spawn('iperf3 server', [
    'iperf3',
    '-s',
    '-1',
    '--forceflush',
    '-B',
    address,
    '-p',
    '5201',
  ]);
  await listener.waitForOutput(/Server listening/, { timeoutMs: 10_000 });
  const { stdout } = await client.exec(['iperf3', '-c', address, '-p', '5201', '-t', String(SECONDS), '-J'], {
    timeoutMs: (SECONDS + 20) * 1000,
  });
  await listener.waitForExit(10_000);
  const result = JSON.parse(stdout) as {
    end: { sum_received: { bits_per_second: number }; sum_sent: { retransmits?: number } };
  };
  return {
    gbps: result.end.sum_received.bits_per_second / 1e9,
    retransmits: result.end.sum_sent.retransmits ?? 0,
  };
};

/** Median time of one all-reduce of NUMEL float32 between two ranks, ms. */
const allReduce = async (
  ranks: readonly { ns: Netns; ifname: string }[],
  masterAddr: string,
): Promise<number> => {
  const processes = ranks.map((r, rank) =>
    r.ns.spawn(`gloo rank ${rank}`, glooAllReduceArgv(), {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        RANK: String(rank),
        WORLD_SIZE: String(ranks.length),
        MASTER_ADDR: masterAddr,
        MASTER_PORT: '29500',
        GLOO_SOCKET_IFNAME: r.ifname,
        ITERS: String(ITERS),
        NUMEL: String(NUMEL),
        TIMEOUT_S: '120',
        OMP_NUM_THREADS: '1',
      },
    }),
  );
  const exits = await Promise.all(processes.map((p) => p.waitForExit(240_000)));
  if (exits.some((e) => e.code !== 0))
    throw new Error(`all-reduce failed:\n${processes.map((p) => p.output).join('\n')}`);
  const times = processes[0]!.stdout
    .split('\n')
    .filter((l) => l.includes('"iter"'))
    .map((l) => (JSON.parse(l) as { ms: number }).ms)
    .sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
};

const startAgent = async (ns: Netns, label: string): Promise<OverlayAgentClient> => {
  const agent = ns.spawn(label, tsxArgv(OVERLAY_AGENT_MAIN), { env: tsxEnv() });
  const client = new OverlayAgentClient({ write: (t) => agent.write(t), onStdout: (l) => agent.onStdout(l) });
  await agent.waitForOutput(/overlay agent ready/, { timeoutMs: 30_000 });
  return client;
};

/** A path under test: where iperf3 and the two ranks run, and the addresses they use. */
interface PathSetup {
  readonly path: string;
  readonly client: Netns;
  readonly server: Netns;
  readonly serverAddress: string;
  readonly ranks: readonly { ns: Netns; ifname: string }[];
  readonly masterAddr: string;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const main = async (): Promise<void> => {
  if (!(await requireTestbed('bench/overlay', ['wireguard-go', 'iperf3', '/usr/bin/python3'])))
    process.exit(1);
  const tb = await Testbed.create('bench');
  const results: PathResult[] = [];
  try {
    const net = await buildInternet(tb, {
      sites: [{ name: 'pub', nat: 'none', hosts: ['h1', 'h2'] }],
      public: ['relay'],
    });
    const [h1, h2] = [net.host('h1'), net.host('h2')];
    const paths: PathSetup[] = [];

    // 1. The underlay.
    paths.push({
      path: 'veth',
      client: h1.ns,
      server: h2.ns,
      serverAddress: h2.address,
      ranks: [
        { ns: h1.ns, ifname: h1.ifname },
        { ns: h2.ns, ifname: h2.ifname },
      ],
      masterAddr: h1.address,
    });

    // 2. wireguard-go point to point: started in each host's namespace, configured statically over
    // UAPI, interfaces left in the hosts.
    const keys = [generateKeyPair(), generateKeyPair()];
    const devices: { ns: Netns; ifname: string }[] = [];
    for (const [i, host] of [h1, h2].entries()) {
      const ifname = `gpob${process.pid % 1000}${i}`;
      host.ns.spawn(`wireguard-go ${ifname}`, ['wireguard-go', '-f', ifname], {
        env: { ...process.env, WG_PROCESS_FOREGROUND: '1', LOG_LEVEL: 'error' },
      });
      devices.push({ ns: host.ns, ifname });
    }
    for (const [i, d] of devices.entries()) {
      const peer = 1 - i;
      await waitForSocket(d.ifname);
      // The UAPI socket is in a directory every namespace shares: configure it from here.
      await uapiSet(`/var/run/wireguard/${d.ifname}.sock`, {
        privateKey: keys[i]!.privateKey,
        listenPort: 51820 + i,
        peers: [
          {
            publicKey: keys[peer]!.publicKey,
            endpoint: `${[h1, h2][peer]!.address}:${51820 + peer}`,
            allowedIps: [`10.99.0.${peer + 1}/32`],
            persistentKeepaliveSec: 0,
          },
        ],
      });
      await d.ns.addAddress(d.ifname, `10.99.0.${i + 1}/24`);
      await d.ns.up(d.ifname);
    }
    paths.push({
      path: 'wg-p2p',
      client: h1.ns,
      server: h2.ns,
      serverAddress: '10.99.0.2',
      ranks: devices,
      masterAddr: '10.99.0.1',
    });

    // 3 and 4. The job overlay, direct and forced through the relay.
    const control = generateAdmissionKeys();
    const relay = net.host('relay').ns.spawn('relay', tsxArgv('services/relay/src/main.ts'), {
      env: tsxEnv({
        RELAY_ID: 'relay-1',
        RELAY_PORT: '8443',
        RELAY_STUN_PORTS: '3478,3479',
        RELAY_VERIFY_KEYS: control.verifyKey,
      }),
    });
    await relay.waitForOutput(/relay started/, { timeoutMs: 30_000 });
    for (const [n, forceRelay] of [
      ['overlay-direct', false],
      ['overlay-relayed', true],
    ] as const) {
      const ranks = [await tb.namespace(`${n}-r1`), await tb.namespace(`${n}-r2`)];
      const agents = await Promise.all([startAgent(h1.ns, `${n} 1`), startAgent(h2.ns, `${n} 2`)]);
      const prefix = forceRelay ? '100.96.52' : '100.96.51';
      const attached = await Promise.all(
        agents.map((a, i) =>
          a.attach({
            jobId: `bench-${n}`,
            networkCidr: `${prefix}.0/24`,
            address: `${prefix}.${i + 1}`,
            relays: [
              { relayId: 'relay-1', host: net.host('relay').address, port: 8443, stunPorts: [3478, 3479] },
            ],
            rankNetns: { name: ranks[i]!.name },
          }),
        ),
      );
      const peers = attached.map(({ endpoint: e }) => ({
        edgeId: null,
        publicKey: e.publicKey,
        address: e.address,
        candidates: e.candidates,
      }));
      const reports = await Promise.all(
        agents.map((a, i) =>
          a.connectPeers(peers, {
            forceRelay,
            windowMs: 2_000,
            admissionToken: issueAdmissionToken(
              {
                jobId: `bench-${n}`,
                publicKey: attached[i]!.endpoint.publicKey,
                exp: Date.now() + 3_600_000,
              },
              control.signingKey,
            ),
          }),
        ),
      );
      const path = reports[0]!.peers[0]!.path;
      if (path !== (forceRelay ? 'relayed' : 'direct')) throw new Error(`${n}: the path is ${path}`);
      paths.push({
        path: n,
        client: ranks[0]!,
        server: ranks[1]!,
        serverAddress: `${prefix}.2`,
        ranks: ranks.map((ns) => ({ ns, ifname: 'gpunet0' })),
        masterAddr: `${prefix}.1`,
      });
    }

    // Rounds interleave the paths, so that load from elsewhere on the machine spreads over all of them.
    const tcp = new Map(paths.map((p) => [p.path, [] as { gbps: number; retransmits: number }[]]));
    for (let round = 0; round < ROUNDS; round++)
      for (const p of paths) {
        const r = await iperf(p.server, p.client, p.serverAddress);
        tcp.get(p.path)!.push(r);
        console.log(`round ${round + 1} ${p.path.padEnd(16)} ${r.gbps.toFixed(3)} Gbit/s`);
      }
    for (const p of paths) {
      const ms = await allReduce(p.ranks, p.masterAddr);
      console.log(`${p.path.padEnd(16)} all-reduce ${ms.toFixed(1)} ms`);
      const runs = tcp.get(p.path)!;
      results.push({
        path: p.path,
        tcpGbps: median(runs.map((r) => r.gbps)),
        tcpRetransmits: median(runs.map((r) => r.retransmits)),
        allReduceMs: ms,
      });
    }
  } finally {
    await tb.destroy();
  }

  const base = results.find((r) => r.path === 'wg-p2p')!;
  const ratio = (path: string) => {
    const r = results.find((x) => x.path === path)!;
    return { tcp: r.tcpGbps / base.tcpGbps, allReduce: base.allReduceMs / r.allReduceMs };
  };
  const ratios = { 'overlay-direct': ratio('overlay-direct'), 'overlay-relayed': ratio('overlay-relayed') };
  console.log(
    `\npath             TCP Gbit/s  retransmits  all-reduce ms (${((NUMEL * 4) / 2 ** 20).toFixed(0)} MiB)   (medians: ${ROUNDS} TCP rounds of ${SECONDS} s, ${ITERS} all-reduces)`,
  );
  for (const r of results)
    console.log(
      `${r.path.padEnd(16)} ${r.tcpGbps.toFixed(3).padStart(10)}  ${String(r.tcpRetransmits).padStart(11)}  ${r.allReduceMs.toFixed(1).padStart(13)}`,
    );
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  console.log(
    `\noverlay-direct / wg-p2p:  TCP ${pct(ratios['overlay-direct'].tcp)}, all-reduce speed ${pct(ratios['overlay-direct'].allReduce)}  (goal ≥ 60 %)`,
  );
  console.log(
    `overlay-relayed / wg-p2p: TCP ${pct(ratios['overlay-relayed'].tcp)}, all-reduce speed ${pct(ratios['overlay-relayed'].allReduce)}  (goal ≥ 40 %)`,
  );
  writeFileSync(
    resolve(import.meta.dirname, 'results.json'),
    `${JSON.stringify(
      {
        recordedAt: new Date().toISOString(),
        machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown' },
        settings: { rounds: ROUNDS, seconds: SECONDS, numel: NUMEL, iters: ITERS },
        results,
        ratios,
        goals: { 'overlay-direct': 0.6, 'overlay-relayed': 0.4 },
      },
      null,
      2,
    )}\n`,
  );
};

/** wireguard-go's UAPI socket appears once it is ready (bounded: 5 s). */
const waitForSocket = async (ifname: string): Promise<void> => {
  for (let i = 0; i < 100 && !existsSync(`/var/run/wireguard/${ifname}.sock`); i++) await sleep(50);
  if (!existsSync(`/var/run/wireguard/${ifname}.sock`))
    throw new Error(`wireguard-go ${ifname} did not start`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
