import { type Netns } from './netns';
import { type Testbed } from './testbed';
import { type Wan, WanBuilder } from './wan';
import { WanProfileError, type WanSpec } from './wan-profile';

/**
 * How a site reaches the "internet":
 * - `none`: its hosts have public addresses;
 * - `cone`: `MASQUERADE` (port-preserving, endpoint-independent mapping): hole punching works;
 * - `symmetric`: `MASQUERADE --random-fully` (a new random port per destination): punching fails,
 *   traffic must be relayed.
 */
export type NatKind = 'none' | 'cone' | 'symmetric';

export interface SiteSpec {
  readonly name: string;
  readonly nat: NatKind;
  /** Names of the hosts on the site's LAN (namespace names, short). */
  readonly hosts: readonly string[];
  /** DNAT port-forwards on the NAT router's public address to a host (a "reachable" host). */
  readonly portForwards?: readonly { protocol: 'tcp' | 'udp'; port: number; host: string }[];
}

export interface InternetSpec {
  readonly sites: readonly SiteSpec[];
  /** Hosts with a public address of their own (a relay). */
  readonly public?: readonly string[];
  /**
   * Distances between sites and public hosts (delay, jitter, loss, rate per pair): the public
   * segment becomes the user-space WAN forwarder instead of a bridge. Pairs name sites (their NAT
   * router, or each host of a `nat: 'none'` site) and public hosts; a site's own traffic is never
   * delayed. Without it, the segment is a kernel bridge with no delay.
   */
  readonly wan?: WanSpec;
}

/** A host of the testbed's internet: its namespace, its one interface and address. */
export interface TestHost {
  readonly name: string;
  readonly ns: Netns;
  readonly ifname: string;
  readonly address: string;
  /** The LAN (or the public segment) the host is on, as a CIDR. */
  readonly subnet: string;
  /** The site's NAT router's public address, for hosts behind one. */
  readonly publicAddress: string | undefined;
}

export interface NatRouter {
  readonly ns: Netns;
  readonly kind: Exclude<NatKind, 'none'>;
  readonly publicAddress: string;
  readonly lanAddress: string;
}

export interface Internet {
  /** The namespace holding the public segment: its bridge, or the WAN forwarder. */
  readonly core: Netns;
  /** The WAN emulator, when the spec gave `wan`: change profiles, read counters. */
  readonly wan: Wan | undefined;
  /** The public segment (documentation range, never routed off the machine). */
  readonly publicSubnet: string;
  readonly hosts: Readonly<Record<string, TestHost>>;
  readonly nats: Readonly<Record<string, NatRouter>>;
  host(name: string): TestHost;
}

/** TEST-NET-3 (RFC 5737): the testbed's "public internet", one bridge in one namespace. */
export const PUBLIC_SUBNET = '203.0.113.0/24';
const publicAddress = (n: number) => `203.0.113.${n}`;
/** Site `i`'s LAN: distinct per site, so one site's private address is unreachable from another. */
const lanPrefix = (i: number) => `192.168.${10 + i}`;

/**
 * Builds sites of hosts, each behind its own NAT router (or public), joined by one public segment,
 * plus public hosts. NAT routers drop unsolicited traffic arriving from the public side, also in
 * `INPUT`: a peer's early probe would otherwise leave a conntrack entry on the router that makes
 * MASQUERADE rewrite the port of the host's own first packet (ADR 0020).
 */
export const buildInternet = async (tb: Testbed, spec: InternetSpec): Promise<Internet> => {
  const wanBuilder = spec.wan ? await WanBuilder.create(tb, spec.wan, wanEndpoints(spec)) : undefined;
  const core = wanBuilder?.ns ?? (await tb.namespace('core'));
  if (!wanBuilder) await tb.bridge(core, 'br0');
  let nextPublic = 10;
  let port = 0;
  const hosts: Record<string, TestHost> = {};
  const nats: Record<string, NatRouter> = {};

  /** Plugs `ns` into the public segment as WAN endpoint `label`; its address comes up at once on
   * the bridge, or when the WAN starts (after every port is planned). */
  const plugPublic = async (ns: Netns, ifname: string, label: string): Promise<string> => {
    const address = publicAddress(nextPublic++);
    if (wanBuilder) {
      await wanBuilder.port(ns, ifname, `${address}/24`, label);
      return address;
    }
    const corePort = `p${port++}`;
    await tb.link(ns, ifname, core, corePort);
    await tb.attach(core, corePort, 'br0');
    await ns.addAddress(ifname, `${address}/24`);
    return address;
  };

  for (const name of spec.public ?? []) {
    const ns = await tb.namespace(name);
    const address = await plugPublic(ns, 'eth0', name);
    hosts[name] = { name, ns, ifname: 'eth0', address, subnet: PUBLIC_SUBNET, publicAddress: address };
  }

  for (const [i, site] of spec.sites.entries()) {
    if (site.nat === 'none') {
      for (const name of site.hosts) {
        const ns = await tb.namespace(name);
        const address = await plugPublic(ns, 'eth0', site.name);
        hosts[name] = { name, ns, ifname: 'eth0', address, subnet: PUBLIC_SUBNET, publicAddress: address };
      }
      continue;
    }
    const router = await tb.namespace(`nat-${site.name}`);
    const wan = await plugPublic(router, 'wan', site.name);
    const lan = lanPrefix(i);
    await tb.bridge(router, 'lan');
    await router.addAddress('lan', `${lan}.1/24`);
    await router.sysctl('net.ipv4.ip_forward', '1');
    const masquerade = ['-t', 'nat', '-A', 'POSTROUTING', '-o', 'wan', '-j', 'MASQUERADE'];
    await router.iptables(site.nat === 'symmetric' ? [...masquerade, '--random-fully'] : masquerade);
    const established = ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'];
    await router.iptables(['-A', 'FORWARD', '-i', 'wan', ...established]);
    await router.iptables(['-A', 'INPUT', '-i', 'wan', ...established]);
    nats[site.name] = { ns: router, kind: site.nat, publicAddress: wan, lanAddress: `${lan}.1` };

    for (const [j, name] of site.hosts.entries()) {
      const ns = await tb.namespace(name);
      await tb.link(ns, 'eth0', router, `h${j}`);
      await tb.attach(router, `h${j}`, 'lan');
      const address = `${lan}.${j + 2}`;
      await ns.addAddress('eth0', `${address}/24`);
      await ns.ip(['route', 'add', 'default', 'via', `${lan}.1`]);
      hosts[name] = { name, ns, ifname: 'eth0', address, subnet: `${lan}.0/24`, publicAddress: wan };
    }
    for (const forward of site.portForwards ?? []) {
      const target = hosts[forward.host];
      if (!target) throw new Error(`port forward to unknown host ${forward.host}`);
      const p = String(forward.port);
      await router.iptables([
        '-t',
        'nat',
        '-A',
        'PREROUTING',
        '-i',
        'wan',
        '-p',
        forward.protocol,
        '--dport',
        p,
        '-j',
        'DNAT',
        '--to-destination',
        `${target.address}:${p}`,
      ]);
      await router.iptables([
        '-A',
        'FORWARD',
        '-i',
        'wan',
        '-m',
        'conntrack',
        '--ctstate',
        'DNAT',
        '-j',
        'ACCEPT',
      ]);
    }
    await router.iptables(['-A', 'FORWARD', '-i', 'wan', '-j', 'DROP']);
    await router.iptables(['-A', 'INPUT', '-i', 'wan', '-j', 'DROP']);
  }

  const emulator = await wanBuilder?.start();
  return {
    core,
    wan: emulator,
    publicSubnet: PUBLIC_SUBNET,
    hosts,
    nats,
    host: (name) => {
      const host = hosts[name];
      if (!host) throw new Error(`no host ${name} in this testbed`);
      return host;
    },
  };
};

/** The WAN's endpoints: sites and public hosts, by name; a name may not be both. */
const wanEndpoints = (spec: InternetSpec): Set<string> => {
  const endpoints = new Set(spec.sites.map((site) => site.name));
  for (const name of spec.public ?? [])
    if (endpoints.has(name))
      throw new WanProfileError(`public`, `${name} is also a site's name: a WAN pair must name one endpoint`);
  for (const name of spec.public ?? []) endpoints.add(name);
  return endpoints;
};
