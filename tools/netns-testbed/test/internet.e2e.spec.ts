import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInternet, type Internet, listNamespaces, probeScript, requireTestbed, Testbed } from '../src';

const ok = await requireTestbed('netns-testbed');

describe.skipIf(!ok)('buildInternet', () => {
  let tb: Testbed;
  let net: Internet;
  let prefix: string;

  beforeAll(async () => {
    tb = await Testbed.create('internet');
    prefix = tb.prefix;
    net = await buildInternet(tb, {
      sites: [
        { name: 'c', nat: 'cone', hosts: ['c1', 'c2'] },
        { name: 's', nat: 'symmetric', hosts: ['s1'] },
      ],
      public: ['pub'],
    });
    const reflector = net.host('pub').ns.spawn('reflector', probeScript('udp-reflector', [3478, 3479]));
    await reflector.waitForOutput(/ready/);
  });

  afterAll(async () => {
    await tb?.destroy();
  });

  const probe = async (host: string, localPort: number) => {
    const pub = net.host('pub').address;
    const { stdout } = await net
      .host(host)
      .ns.exec(probeScript('udp-probe', [localPort, 3000, `${pub}:3478`, `${pub}:3479`]));
    return Object.values(JSON.parse(stdout) as Record<string, string | null>);
  };

  it('maps a cone host to one public port (its own) for every destination', async () => {
    const seen = await probe('c1', 40001);
    expect(seen).toEqual([`${net.nats['c']!.publicAddress}:40001`, `${net.nats['c']!.publicAddress}:40001`]);
  });

  it('maps a symmetric host to a different public port per destination', async () => {
    const seen = await probe('s1', 40002);
    expect(seen.every((s) => s?.startsWith(`${net.nats['s']!.publicAddress}:`))).toBe(true);
    expect(new Set(seen).size).toBe(2);
  });

  it('lets hosts of one LAN talk directly, and nobody reach a private address of another site', async () => {
    const listener = net.host('c2').ns.spawn('listen', probeScript('tcp-listen', [7000]));
    await listener.waitForOutput(/ready/);
    const lan = await net
      .host('c1')
      .ns.exec(probeScript('tcp-connect', [net.host('c2').address, 7000, 3000]));
    expect(lan.stdout.trim()).toBe('connected');
    const across = await net
      .host('s1')
      .ns.exec(probeScript('tcp-connect', [net.host('c2').address, 7000, 3000]), { allowFailure: true });
    expect(across.stdout.trim()).toMatch(/^error (ENETUNREACH|EHOSTUNREACH)$/);
    const unsolicited = await net
      .host('pub')
      .ns.exec(probeScript('tcp-connect', [net.nats['c']!.publicAddress, 7000, 1500]), {
        allowFailure: true,
      });
    expect(unsolicited.stdout.trim()).toBe('error ETIMEDOUT');
  });

  it('removes every namespace and process on destroy', async () => {
    const processes = [...tb.processes];
    expect((await listNamespaces()).filter((n) => n.startsWith(prefix))).toHaveLength(7);
    await tb.destroy();
    expect((await listNamespaces()).filter((n) => n.startsWith(prefix))).toEqual([]);
    expect(processes.every((p) => p.exit !== undefined)).toBe(true);
  });
});
