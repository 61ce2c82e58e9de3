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
  type OverlayHost,
  relayAt,
  RELAY_PORT,
  startRelay,
} from './support/overlay-job';

const ok = await requireTestbed('overlay isolation', ['wireguard-go']);

/**
 * Two jobs on the same two hosts (behind symmetric NATs, so both relayed through the same relay):
 * job A's rank can reach job A's peers and nothing else — not job B's overlay, not the hosts' own
 * networks and control-plane ports, not the relay — even when it rewrites its own routes.
 */
describe.skipIf(!ok)('isolation of a job overlay', () => {
  let tb: Testbed;
  let net: Internet;
  let jobA: AttachedJob;
  let jobB: AttachedJob;
  let rankA: Netns;
  const CONTROL_PORT = 7777;
  const RANK_PORT = 9100;

  const connect = async (from: Netns, address: string, port: number, timeoutMs = 2_000) =>
    (
      await from.exec(probeScript('tcp-connect', [address, port, timeoutMs]), { allowFailure: true })
    ).stdout.trim();

  beforeAll(async () => {
    tb = await Testbed.create('isolation');
    net = await buildInternet(tb, {
      sites: [
        { name: 'a', nat: 'symmetric', hosts: ['ha'] },
        { name: 'b', nat: 'symmetric', hosts: ['hb'] },
      ],
      public: ['relay'],
    });
    await startRelay(net.host('relay').ns);
    const relays = [relayAt(net.host('relay').address)];
    const ns = async (name: string) => tb.namespace(name);
    const hostsA: OverlayHost[] = [
      { hostNs: net.host('ha').ns, rankNs: await ns('a-ra') },
      { hostNs: net.host('hb').ns, rankNs: await ns('a-rb') },
    ];
    const hostsB: OverlayHost[] = [
      { hostNs: net.host('ha').ns, rankNs: await ns('b-ra') },
      { hostNs: net.host('hb').ns, rankNs: await ns('b-rb') },
    ];
    [jobA, jobB] = await Promise.all([
      attachJob('job-iso-a', '100.96.31', hostsA, relays, { windowMs: 1_500, measureThroughput: false }),
      attachJob('job-iso-b', '100.96.32', hostsB, relays, { windowMs: 1_500, measureThroughput: false }),
    ]);
    rankA = hostsA[0]!.rankNs;
    // Something listening everywhere a rank of job A must not reach, and at its own peer.
    const listeners = [
      hostsA[1]!.rankNs.spawn('rank a-rb', probeScript('tcp-listen', [RANK_PORT])),
      hostsB[0]!.rankNs.spawn('rank b-ra', probeScript('tcp-listen', [RANK_PORT])),
      hostsB[1]!.rankNs.spawn('rank b-rb', probeScript('tcp-listen', [RANK_PORT])),
      net.host('ha').ns.spawn('edge control ha', probeScript('tcp-listen', [CONTROL_PORT])),
      net.host('hb').ns.spawn('edge control hb', probeScript('tcp-listen', [CONTROL_PORT])),
    ];
    await Promise.all(listeners.map((l) => l.waitForOutput(/ready/)));
  });

  afterAll(async () => {
    await Promise.all(
      [...(jobA?.agents ?? []), ...(jobB?.agents ?? [])].map((a) => a.detach().catch(() => undefined)),
    );
    await tb?.destroy();
  });

  it("reaches its own job's peer over the relayed overlay", async () => {
    expect(jobA.reports[0]!.peers[0]!.path).toBe('relayed');
    expect(await connect(rankA, jobA.addresses[1]!, RANK_PORT, 10_000)).toBe('connected');
  });

  it("cannot reach any address of job B's overlay, nor the hosts' addresses and control ports, nor the relay", async () => {
    const targets = [
      ...jobB.addresses.map((address) => ({ address, port: RANK_PORT })),
      { address: net.host('ha').address, port: CONTROL_PORT },
      { address: net.host('hb').address, port: CONTROL_PORT },
      { address: net.nats['a']!.publicAddress, port: CONTROL_PORT },
      { address: net.host('relay').address, port: RELAY_PORT },
    ];
    const results = await Promise.all(targets.map((t) => connect(rankA, t.address, t.port)));
    expect(results).toEqual(targets.map(() => 'error ENETUNREACH'));
    // Its loopback is its own: the host's control port is not there.
    expect(await connect(rankA, '127.0.0.1', CONTROL_PORT)).toBe('error ECONNREFUSED');
    expect((await rankA.links()).sort()).toEqual(['gpunet0', 'lo']);
  });

  it('stays isolated when the rank routes everything into the overlay: WireGuard drops what no peer owns', async () => {
    // A rank with CAP_NET_ADMIN could do this; cryptokey routing still sends nothing anywhere but to job A's peer.
    await rankA.ip(['route', 'add', 'default', 'dev', 'gpunet0']);
    const targets = [
      ...jobB.addresses.map((address) => ({ address, port: RANK_PORT })),
      { address: net.host('ha').address, port: CONTROL_PORT },
      { address: net.host('hb').address, port: CONTROL_PORT },
      { address: net.host('relay').address, port: RELAY_PORT },
    ];
    const results = await Promise.all(targets.map((t) => connect(rankA, t.address, t.port)));
    expect(results).toHaveLength(targets.length);
    for (const result of results)
      expect(result).toMatch(/^error (ETIMEDOUT|ENOKEY|EHOSTUNREACH|ENETUNREACH)$/);
    expect(await connect(rankA, jobA.addresses[1]!, RANK_PORT, 10_000)).toBe('connected');
  });
});
