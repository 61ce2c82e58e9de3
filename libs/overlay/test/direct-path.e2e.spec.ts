import {
  buildInternet,
  type Internet,
  type Netns,
  probeScript,
  requireTestbed,
  Testbed,
} from '@gpunet/netns-testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EdgePathReport } from '@gpunet/contracts';
import { type Agent, startAgent } from './support/agents';

const ok = await requireTestbed('overlay direct path', ['wireguard-go']);

/*
 * Two hosts on one LAN, each with a rank namespace that has nothing but `lo`: the overlay is the
 * ranks' only network, and its path between the hosts must be direct.
 */
describe.skipIf(!ok)('overlay between two hosts of one LAN', () => {
  let tb: Testbed;
  let net: Internet;
  let ranks: Netns[];
  let agents: Agent[];
  let reports: EdgePathReport[];
  const network = '100.96.7.0/24';
  const addresses = ['100.96.7.1', '100.96.7.2'];

  beforeAll(async () => {
    tb = await Testbed.create('direct');
    net = await buildInternet(tb, { sites: [{ name: 'lan', nat: 'cone', hosts: ['a', 'b'] }] });
    ranks = [await tb.namespace('ra'), await tb.namespace('rb')];
    agents = [await startAgent(net.host('a').ns, 'agent-a'), await startAgent(net.host('b').ns, 'agent-b')];
    const attached = await Promise.all(
      agents.map((agent, i) =>
        agent.client.attach({
          jobId: 'job-direct',
          networkCidr: network,
          address: addresses[i]!,
          relays: [],
          rankNetns: { name: ranks[i]!.name },
        }),
      ),
    );
    const peers = attached.map((a) => ({
      edgeId: null,
      publicKey: a.endpoint.publicKey,
      address: a.endpoint.address,
      candidates: a.endpoint.candidates,
    }));
    reports = await Promise.all(agents.map((agent) => agent.client.connectPeers(peers, { windowMs: 3_000 })));
  });

  afterAll(async () => {
    await Promise.all((agents ?? []).map((a) => a.client.detach().catch(() => undefined)));
    await tb?.destroy();
  });

  it('gives each rank namespace one overlay interface, gpunet0, with its address', async () => {
    for (const [i, rank] of ranks.entries()) {
      expect((await rank.links()).sort()).toEqual(['gpunet0', 'lo']);
      expect((await rank.addresses())['gpunet0']).toEqual([`${addresses[i]}/24`]);
    }
  });

  it('offers the LAN address as a host candidate and chooses the direct path both ways', () => {
    for (const [i, report] of reports.entries()) {
      expect(report.peers).toHaveLength(1);
      const [path] = report.peers;
      expect(path).toMatchObject({ path: 'direct', peerAddress: addresses[1 - i], relayId: null });
      expect(path!.endpoint).toMatch(
        new RegExp(`^${net.host(i === 0 ? 'b' : 'a').address.replace(/\./g, '\\.')}:\\d+$`),
      );
      expect(path!.rttMs).toBeGreaterThan(0);
      expect(path!.throughputBps).toBeGreaterThan(0);
    }
  });

  it('carries TCP between the ranks over the overlay, encrypted by WireGuard', async () => {
    const listener = ranks[1]!.spawn('listen', probeScript('tcp-listen', [9000, addresses[1]!]));
    await listener.waitForOutput(/ready/);
    // Within 4 s: before WireGuard's 5 s handshake retry, which both ends initiating at once would
    // need. The script's own timeout reports first; the command's kill comes after it.
    const { stdout } = await ranks[0]!.exec(probeScript('tcp-connect', [addresses[1]!, 9000, 4_000]), {
      timeoutMs: 9_000,
    });
    expect(stdout.trim()).toBe('connected');
    const report = await agents[0]!.client.pathReport();
    expect(report.peers[0]!.lastHandshakeAt).not.toBeNull();
    expect(report.peers[0]!.txBytes).toBeGreaterThan(0);
  });

  it('leaves nothing behind when attaching fails half way (no such rank namespace)', async () => {
    const agent = await startAgent(net.host('a').ns, 'agent-failing');
    await expect(
      agent.client.attach({
        jobId: 'job-broken',
        networkCidr: network,
        address: addresses[0]!,
        relays: [],
        rankNetns: { name: `${tb.prefix}-missing` },
      }),
    ).rejects.toThrow(/netns|namespace|No such file/i);
    expect((await net.host('a').ns.links()).filter((l) => l.startsWith('gpn'))).toEqual([]);
  });

  it('removes the interface and its process on detach', async () => {
    await agents[0]!.client.detach();
    expect(await ranks[0]!.links()).toEqual(['lo']);
  });
});
