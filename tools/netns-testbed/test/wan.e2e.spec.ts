import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildInternet,
  type Internet,
  listNamespaces,
  probeScript,
  requireTestbed,
  run,
  Testbed,
  type TestProcess,
} from '../src';

interface RttRun {
  readonly sent: number;
  readonly received: number;
  readonly rttMs: readonly number[];
}

/*
 * Timing on a 2-core machine shared with other work: the forwarder never delivers early, so the
 * lowest round trip is at least the configured one; scheduling noise only adds, so the median may
 * exceed it by this much.
 */
const slack = (rttMs: number) => 15 + 0.25 * rttMs;
const median = (xs: readonly number[]) => xs[Math.floor(xs.length / 2)]!;

const expectRtt = (result: RttRun, expectedMs: number, jitterMs = 0) => {
  expect(result.received).toBe(result.sent);
  expect(result.rttMs[0]).toBeGreaterThanOrEqual(expectedMs - 2 * jitterMs);
  expect(median(result.rttMs)).toBeLessThanOrEqual(expectedMs + slack(expectedMs));
};

const ok = await requireTestbed('netns-testbed wan', ['iperf3']);

describe.skipIf(!ok)('buildInternet with a WAN profile', () => {
  let tb: Testbed;
  let net: Internet;
  let prefix: string;
  const echoPort = 7000;

  beforeAll(async () => {
    tb = await Testbed.create('wan');
    prefix = tb.prefix;
    net = await buildInternet(tb, {
      sites: [
        { name: 'a', nat: 'cone', hosts: ['a1', 'a2'] },
        {
          name: 'b',
          nat: 'cone',
          hosts: ['b1'],
          portForwards: [{ protocol: 'udp', port: echoPort, host: 'b1' }],
        },
        { name: 'c', nat: 'cone', hosts: ['c1'] },
        { name: 'n', nat: 'none', hosts: ['n1', 'n2'] },
      ],
      public: ['pub'],
      wan: {
        seed: 7,
        default: { delayMs: 25 },
        pairs: [
          { a: 'a', b: 'b', delayMs: 20, jitterMs: 2 },
          { a: 'a', b: 'pub', delayMs: 15 },
          { a: 'b', b: 'pub', delayMs: 5, rateBps: 20_000_000, queuePackets: 200 },
          { a: 'c', b: 'pub', lossPct: 10 },
        ],
      },
    });
    const echoes = [
      net.host('pub').ns.spawn('echo', probeScript('udp-echo', [echoPort])),
      net.host('b1').ns.spawn('echo', probeScript('udp-echo', [echoPort])),
      net.host('a2').ns.spawn('echo', probeScript('udp-echo', [echoPort])),
      net.host('n2').ns.spawn('echo', probeScript('udp-echo', [echoPort])),
      net.host('pub').ns.spawn('reflector', probeScript('udp-reflector', [3478, 3479])),
    ];
    await Promise.all(echoes.map((p) => p.waitForOutput(/ready/)));
  });

  afterAll(async () => {
    await tb?.destroy();
  });

  const rtt = async (from: string, to: string, count = 40, intervalMs = 20): Promise<RttRun> => {
    const { stdout } = await net
      .host(from)
      .ns.exec(probeScript('udp-rtt', [`${to}:${echoPort}`, count, intervalMs, 1_500]), {
        timeoutMs: count * intervalMs + 10_000,
      });
    return JSON.parse(stdout) as RttRun;
  };

  /** 1 000 round trips from c1 to pub, 2 ms apart, and what the WAN counted for them. */
  const lossRun = async (internet: Internet) => {
    const wan = internet.wan!;
    const before = [await wan.direction('c', 'pub'), await wan.direction('pub', 'c')];
    const { stdout } = await internet
      .host('c1')
      .ns.exec(probeScript('udp-rtt', [`${internet.host('pub').address}:${echoPort}`, 1_000, 2, 1_500]), {
        timeoutMs: 20_000,
      });
    const result = JSON.parse(stdout) as RttRun;
    const after = [await wan.direction('c', 'pub'), await wan.direction('pub', 'c')];
    const [up, down] = after.map((d, i) => ({
      forwarded: d.forwarded - before[i]!.forwarded,
      lossDropped: d.lossDropped - before[i]!.lossDropped,
    }));
    return { sent: result.sent, received: result.received, up: up!, down: down! };
  };

  it('delays each direction of a pair by its one-way delay: RTT ≈ 2 × delayMs (through a port forward)', async () => {
    expectRtt(await rtt('a1', net.nats['b']!.publicAddress), 40, 2);
  });

  it('gives pairs it does not list the default profile', async () => {
    expectRtt(await rtt('n1', net.host('pub').address), 50);
  });

  it('does not delay hosts of one site: a LAN, nor two public hosts of a nat:none site', async () => {
    for (const [from, to] of [
      ['a1', 'a2'],
      ['n1', 'n2'],
    ] as const) {
      const result = await rtt(from, net.host(to).address);
      expect(result.received).toBe(result.sent);
      expect(median(result.rttMs)).toBeLessThan(10);
    }
  });

  it('keeps cone NAT mappings port-preserving across the WAN', async () => {
    const pub = net.host('pub').address;
    const { stdout } = await net
      .host('a1')
      .ns.exec(probeScript('udp-probe', [40001, 3000, `${pub}:3478`, `${pub}:3479`]));
    const mapped = `${net.nats['a']!.publicAddress}:40001`;
    expect(Object.values(JSON.parse(stdout) as Record<string, string>)).toEqual([mapped, mapped]);
  });

  it('drops about lossPct of packets each way, counts every drop, and drops the same ones for the same seed', async () => {
    const first = await lossRun(net);
    // 10 % each way: 81 % of round trips complete; ± 3 σ of a binomial over 1 000 is about ± 37.
    expect(first.received).toBeGreaterThanOrEqual(770);
    expect(first.received).toBeLessThanOrEqual(850);
    expect(first.up.lossDropped + first.down.lossDropped).toBe(first.sent - first.received);
    expect(first.up.forwarded).toBe(first.sent - first.up.lossDropped);
    expect(first.down.forwarded).toBe(first.received);

    // The same traffic on a fresh internet with the same seed: the same packets are lost.
    const again = await Testbed.create('wan-seed');
    try {
      const twin = await buildInternet(again, {
        sites: [{ name: 'c', nat: 'cone', hosts: ['c1'] }],
        public: ['pub'],
        wan: { seed: 7, pairs: [{ a: 'c', b: 'pub', lossPct: 10 }] },
      });
      await twin
        .host('pub')
        .ns.spawn('echo', probeScript('udp-echo', [echoPort]))
        .waitForOutput(/ready/);
      expect(await lossRun(twin)).toEqual(first);
    } finally {
      await again.destroy();
    }
  });

  it('caps a pair at rateBps: one TCP stream gets close to it, never above', async () => {
    const server = net.host('pub').ns.spawn('iperf3', ['iperf3', '-s', '-1', '--forceflush', '-p', '5201']);
    await server.waitForOutput(/Server listening/);
    const { stdout } = await net
      .host('b1')
      .ns.exec(['iperf3', '-c', net.host('pub').address, '-p', '5201', '-t', '3', '-J'], {
        timeoutMs: 20_000,
      });
    const bps = (JSON.parse(stdout) as { end: { sum_received: { bits_per_second: number } } }).end
      .sum_received.bits_per_second;
    // TCP payload is 1448 of every 1500 IP bytes the cap counts (96.5 %), less slow start.
    expect(bps).toBeLessThanOrEqual(20_000_000);
    expect(bps).toBeGreaterThanOrEqual(0.8 * 20_000_000);
    expect((await net.wan!.counters()).sendErrors).toBe(0);
  });

  it('applies a changed profile to the packets that follow', async () => {
    const pub = net.host('pub').address;
    expectRtt(await rtt('a1', pub, 20), 30);
    await net.wan!.setProfile({ a: 'a', b: 'pub', delayMs: 60 });
    expectRtt(await rtt('a1', pub, 20), 120);
    await net.wan!.setProfile({ a: 'a', b: 'pub', delayMs: 5, bToA: { delayMs: 45 } });
    expectRtt(await rtt('a1', pub, 20), 50);
  });

  it('rejects a runtime profile naming an unknown endpoint or a bad field', async () => {
    await expect(net.wan!.setProfile({ a: 'a', b: 'nowhere', delayMs: 1 })).rejects.toThrow(
      /^setProfile\.b: must name a site or public host/,
    );
    await expect(net.wan!.setProfile({ a: 'a', b: 'pub', lossPct: 120 })).rejects.toThrow(
      /^setProfile\.lossPct: must be a number from 0 to 100/,
    );
  });

  it('stops the forwarder and removes every namespace on destroy', async () => {
    const forwarder = net.wan!.forwarder;
    expect(forwarder.exit).toBeUndefined();
    // a, b, c routers; a1, a2, b1, c1, n1, n2, pub; wan
    expect((await listNamespaces()).filter((n) => n.startsWith(prefix))).toHaveLength(11);
    await tb.destroy();
    expect(forwarder.exit).toBeDefined();
    expect((await listNamespaces()).filter((n) => n.startsWith(prefix))).toEqual([]);
  });
});

describe.skipIf(!ok)('buildInternet with an invalid WAN profile', () => {
  it.each([
    [
      'a bad field',
      {
        sites: [{ name: 'a', nat: 'cone' as const, hosts: ['a1'] }],
        public: ['pub'],
        wan: { pairs: [{ a: 'a', b: 'pub', jitterMs: 5 }] },
      },
      'wan.pairs[0].jitterMs: must not exceed delayMs (0)',
    ],
    [
      'a public host named like a site',
      { sites: [{ name: 'a', nat: 'cone' as const, hosts: ['a1'] }], public: ['a'], wan: {} },
      'public: a is also a site',
    ],
  ])('rejects %s before creating any namespace', async (_name, spec, message) => {
    const tb = await Testbed.create('wan-invalid');
    try {
      await expect(buildInternet(tb, spec)).rejects.toThrow(message);
      expect(tb.namespaces).toEqual([]);
    } finally {
      await tb.destroy();
    }
  });
});

const wgOk = ok && (await requireTestbed('netns-testbed wan (wireguard)', ['wireguard-go', 'wg']));

/*
 * Two cone-NATed hosts punch a WireGuard tunnel through each other's NAT across a 25 ms WAN: the
 * handshake survives routers that drop unsolicited packets, and the tunnel's RTT shows the distance.
 */
describe.skipIf(!wgOk)('wireguard-go across the WAN', () => {
  let tb: Testbed;
  let net: Internet;
  let dir: string;
  const tunnel = ['10.77.0.1', '10.77.0.2'] as const;
  const wgPort = 51820;
  const devices: TestProcess[] = [];

  beforeAll(async () => {
    tb = await Testbed.create('wan-wg');
    net = await buildInternet(tb, {
      sites: [
        { name: 'x', nat: 'cone', hosts: ['x1'] },
        { name: 'y', nat: 'cone', hosts: ['y1'] },
      ],
      wan: { pairs: [{ a: 'x', b: 'y', delayMs: 25 }] },
    });
    dir = await mkdtemp(join(tmpdir(), 'wan-wg-'));
    const hosts = ['x1', 'y1'] as const;
    const keys = await Promise.all(
      hosts.map(async () => {
        const secret = (await run(['wg', 'genkey'])).stdout.trim();
        const pub = (await run(['wg', 'pubkey'], { input: secret })).stdout.trim();
        return { secret, pub };
      }),
    );
    // The UAPI socket is named after the interface in a directory every namespace shares.
    const ifnames = hosts.map(() => `wgt${randomBytes(4).toString('hex')}`);
    for (const [i, host] of hosts.entries()) {
      const peer = 1 - i;
      const ns = net.host(host).ns;
      const device = ns.spawn('wireguard-go', ['wireguard-go', '-f', ifnames[i]!], {
        env: { ...process.env, WG_PROCESS_FOREGROUND: '1', LOG_LEVEL: 'verbose' },
      });
      devices.push(device);
      await device.waitForOutput(/UAPI listener started/);
      const conf = join(dir, `${host}.conf`);
      await writeFile(
        conf,
        [
          '[Interface]',
          `PrivateKey = ${keys[i]!.secret}`,
          `ListenPort = ${wgPort}`,
          '[Peer]',
          `PublicKey = ${keys[peer]!.pub}`,
          `Endpoint = ${net.nats[hosts[peer] === 'x1' ? 'x' : 'y']!.publicAddress}:${wgPort}`,
          `AllowedIPs = ${tunnel[peer]}/32`,
          'PersistentKeepalive = 1',
          '',
        ].join('\n'),
      );
      await ns.exec(['wg', 'setconf', ifnames[i]!, conf]);
      await ns.addAddress(ifnames[i]!, `${tunnel[i]}/24`);
      await ns.up(ifnames[i]!);
    }
    const echo = net.host('y1').ns.spawn('echo', probeScript('udp-echo', [7000, tunnel[1]]));
    await echo.waitForOutput(/ready/);
    // PersistentKeepalive starts the handshake at once; whichever side's initiation crosses the
    // other's NAT after that NAT's own packet went out completes it (WireGuard retries every 5 s).
    await Promise.race(
      devices.map((d) => d.waitForOutput(/Received handshake response/, { timeoutMs: 20_000 })),
    );
  });

  afterAll(async () => {
    await tb?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('carries the tunnel, whose RTT is the WAN distance', async () => {
    const { stdout } = await net
      .host('x1')
      .ns.exec(probeScript('udp-rtt', [`${tunnel[1]}:7000`, 40, 20, 1_500]), { timeoutMs: 20_000 });
    expectRtt(JSON.parse(stdout) as RttRun, 50);
    expect(devices.every((d) => d.exit === undefined)).toBe(true);
  });
});
