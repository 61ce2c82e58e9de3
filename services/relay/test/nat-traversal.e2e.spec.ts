import {
  buildInternet,
  type Internet,
  type Netns,
  probeScript,
  requireTestbed,
  Testbed,
} from '@gpunet/netns-testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AttachedJob,
  attachJob,
  glooEvents,
  type OverlayHost,
  overlayRanks,
  RELAY_METRICS_PORT,
  relayAt,
  startGloo,
  startRelay,
} from './support/overlay-job';

const ok = await requireTestbed('relay NAT traversal', ['wireguard-go', '/usr/bin/python3']);

describe.skipIf(!ok)('two hosts behind separate symmetric NATs, a relay in public', () => {
  let tb: Testbed;
  let net: Internet;
  let hosts: OverlayHost[];
  let job: AttachedJob;

  beforeAll(async () => {
    tb = await Testbed.create('symmetric');
    net = await buildInternet(tb, {
      sites: [
        // The rendezvous port of host a is forwarded, as a provider might do for the job without overlay.
        {
          name: 'a',
          nat: 'symmetric',
          hosts: ['ha'],
          portForwards: [{ protocol: 'tcp', port: 29500, host: 'ha' }],
        },
        { name: 'b', nat: 'symmetric', hosts: ['hb'] },
      ],
      public: ['relay'],
    });
    await startRelay(net.host('relay').ns);
    hosts = [
      { hostNs: net.host('ha').ns, rankNs: await tb.namespace('ra') },
      { hostNs: net.host('hb').ns, rankNs: await tb.namespace('rb') },
    ];
  });

  afterAll(async () => {
    await Promise.all((job?.agents ?? []).map((a) => a.detach().catch(() => undefined)));
    await tb?.destroy();
  });

  it('without the overlay, Gloo fails: a rank dials the private address its peer advertised', async () => {
    // The store of rank 0 is reachable: rank 0 uses its own address, rank 1 the port-forward.
    const env = (host: string, masterAddr: string) => ({
      MASTER_ADDR: masterAddr,
      MASTER_PORT: '29500',
      GLOO_SOCKET_IFNAME: net.host(host).ifname,
    });
    const ranks = startGloo(
      [
        { ns: net.host('ha').ns, env: env('ha', net.host('ha').address) },
        { ns: net.host('hb').ns, env: env('hb', net.nats['a']!.publicAddress) },
      ],
      { label: 'plain', timeoutS: 20 },
    );
    // Whichever rank dials the other (Gloo decides per pair), it dials the private address the other
    // advertised through the store, which no one outside its site can route.
    const privateAddresses = ['ha', 'hb'].map((h) => net.host(h).address.replace(/\./g, '\\.')).join('|');
    const unreachable = new RegExp(
      `connect \\[(${privateAddresses})\\]:\\d+: (Network is unreachable|No route to host)`,
    );
    const failing = await Promise.any(
      ranks.map(async (r) => {
        await r.waitForOutput(unreachable, { timeoutMs: 40_000 });
        return r;
      }),
    );
    expect((await failing.waitForExit(20_000)).code).not.toBe(0);
    // The other rank waits for a connection that never comes, until its timeout: stop it.
    await Promise.all(ranks.map((r) => r.stop()));
  });

  it('with the overlay, both NATs are detected as symmetric and every path goes through the relay', async () => {
    // The job's first relay is down: edges fail over to the next one, in the order they were told.
    const down = { relayId: 'relay-0', host: net.host('relay').address, port: 8444, stunPorts: [3490] };
    job = await attachJob('job-sym', '100.96.21', hosts, [down, relayAt(net.host('relay').address)], {
      windowMs: 2_000,
    });
    for (const endpoint of job.endpoints) {
      expect(endpoint.relayId).toBe('relay-1');
      expect(endpoint.natMapping).toBe('endpoint-dependent');
      expect(endpoint.candidates.map((c) => c.kind)).toEqual(['host']);
    }
    for (const report of job.reports) {
      expect(report.peers).toHaveLength(1);
      expect(report.peers[0]).toMatchObject({ path: 'relayed', relayId: 'relay-1', endpoint: null });
      expect(report.peers[0]!.rttMs).toBeGreaterThan(0);
      expect(report.peers[0]!.throughputBps).toBeGreaterThan(0);
    }
  });

  it('a 4-rank Gloo all-reduce with MASTER_ADDR and GLOO_SOCKET_IFNAME on the overlay succeeds through the relay', async () => {
    const ranks = startGloo(overlayRanks(job, hosts, 2), {
      label: 'overlay',
      iters: 3,
      numel: 1 << 18,
      timeoutS: 60,
    });
    const exits = await Promise.all(ranks.map((r) => r.waitForExit(120_000)));
    expect(
      exits.map((e) => e.code),
      ranks.map((r) => r.output).join('\n'),
    ).toEqual([0, 0, 0, 0]);
    for (const rank of ranks) {
      const events = glooEvents(rank);
      expect(events.filter((e) => e.event === 'iter' && e.ok)).toHaveLength(3);
      expect(events.at(-1)?.event).toBe('done');
    }
    // The relay carried it, and accounted it to the job.
    const { stdout } = await net
      .host('relay')
      .ns.exec(probeScript('http-get', [`http://127.0.0.1:${RELAY_METRICS_PORT}/metrics`]));
    const bytes = Number(/gpunet_relay_forwarded_bytes_total\{job="job-sym"[^}]*\} (\d+)/.exec(stdout)?.[1]);
    expect(bytes).toBeGreaterThan(3 * 2 * (1 << 18) * 4);
    const report = await job.agents[0]!.pathReport();
    expect(report.peers[0]!.lastHandshakeAt).not.toBeNull();
  });
});

describe.skipIf(!ok)('two hosts behind separate permissive (cone) NATs', () => {
  let tb: Testbed;
  let net: Internet;
  let hosts: OverlayHost[];
  let job: AttachedJob;
  let ranks: Netns[];

  beforeAll(async () => {
    tb = await Testbed.create('cone');
    net = await buildInternet(tb, {
      sites: [
        { name: 'a', nat: 'cone', hosts: ['ca'] },
        { name: 'b', nat: 'cone', hosts: ['cb'] },
      ],
      public: ['relay'],
    });
    await startRelay(net.host('relay').ns);
    ranks = [await tb.namespace('ra'), await tb.namespace('rb')];
    hosts = [
      { hostNs: net.host('ca').ns, rankNs: ranks[0]! },
      { hostNs: net.host('cb').ns, rankNs: ranks[1]! },
    ];
    job = await attachJob('job-cone', '100.96.22', hosts, [relayAt(net.host('relay').address)], {
      windowMs: 3_000,
    });
  });

  afterAll(async () => {
    await Promise.all((job?.agents ?? []).map((a) => a.detach().catch(() => undefined)));
    await tb?.destroy();
  });

  it('punches through both NATs: the path is direct, to the peer’s public mapping, not relayed', () => {
    for (const [i, endpoint] of job.endpoints.entries()) {
      expect(endpoint.natMapping).toBe('endpoint-independent');
      expect(endpoint.candidates.find((c) => c.kind === 'reflexive')?.endpoint).toMatch(
        new RegExp(`^${net.nats[i === 0 ? 'a' : 'b']!.publicAddress.replace(/\./g, '\\.')}:\\d+$`),
      );
    }
    for (const [i, report] of job.reports.entries()) {
      const peerNat = net.nats[i === 0 ? 'b' : 'a']!.publicAddress;
      expect(report.peers[0]).toMatchObject({ path: 'direct', relayId: null });
      expect(report.peers[0]!.endpoint!.startsWith(`${peerNat}:`)).toBe(true);
    }
  });

  it('carries a Gloo all-reduce directly', async () => {
    const gloo = startGloo(overlayRanks(job, hosts, 1), { label: 'cone', iters: 2, numel: 1 << 18 });
    const exits = await Promise.all(gloo.map((r) => r.waitForExit(120_000)));
    expect(
      exits.map((e) => e.code),
      gloo.map((r) => r.output).join('\n'),
    ).toEqual([0, 0]);
    const { stdout } = await net
      .host('relay')
      .ns.exec(probeScript('http-get', [`http://127.0.0.1:${RELAY_METRICS_PORT}/metrics`]));
    // Only the probes went through the relay (RTT and the bounded burst): far less than the all-reduce.
    const bytes = Number(
      /gpunet_relay_forwarded_bytes_total\{job="job-cone"[^}]*\} (\d+)/.exec(stdout)?.[1] ?? 0,
    );
    expect(bytes).toBeLessThan(2 * (1 << 18) * 4);
  });
});
