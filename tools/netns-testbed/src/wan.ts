import { resolve } from 'node:path';
import { type Netns } from './netns';
import { type TestProcess } from './process';
import { type Testbed } from './testbed';
import {
  validateWanPair,
  validateWanSpec,
  type WanDirection,
  type WanPair,
  type WanSpec,
} from './wan-profile';

const FORWARDER = resolve(import.meta.dirname, '../scripts/wan-forwarder.py');
/** Debian's interpreter, as for the Gloo ranks: the forwarder needs nothing beyond the stdlib. */
const PYTHON = '/usr/bin/python3';
/**
 * The forwarder is the network: under load from other work on the machine its timers must fire on
 * time, so it runs at a higher priority (it costs CPU only per packet).
 */
const NICE = '-10';
const CONTROL_TIMEOUT_MS = 5_000;

/** What the forwarder counted for one direction of a pair since it started. */
export interface WanDirectionCounters {
  readonly from: string;
  readonly to: string;
  /** Packets delivered. */
  readonly forwarded: number;
  /** IP bytes delivered. */
  readonly bytes: number;
  readonly lossDropped: number;
  /** Dropped because the rate queue held `queuePackets` already. */
  readonly queueDropped: number;
}

export interface WanCounters {
  /** Every direction that carried or dropped a packet, or was given a profile. */
  readonly directions: readonly WanDirectionCounters[];
  /** Frames passed at once: broadcast, multicast, non-IP, and between ports of one site. */
  readonly unimpaired: number;
  /** Frames the kernel refused to send (a full socket buffer, a frame over the MTU). */
  readonly sendErrors: number;
}

/** The forwarder did not answer a control request, or answered with an error. */
export class WanControlError extends Error {
  override readonly name = 'WanControlError';
  readonly code = 'WAN_CONTROL_FAILED' as const;
}

/**
 * The testbed's WAN, running: the `wan` namespace with one veth per NAT router and public host, and
 * the user-space forwarder between them (`scripts/wan-forwarder.py`). Profiles can change while
 * traffic flows; counters are per direction.
 */
export class Wan {
  readonly #endpoints: ReadonlySet<string>;
  readonly #pending = new Map<number, { resolve: (answer: Record<string, unknown>) => void }>();
  #nextId = 1;
  #buffer = '';

  constructor(
    readonly ns: Netns,
    readonly forwarder: TestProcess,
    endpoints: ReadonlySet<string>,
  ) {
    this.#endpoints = endpoints;
    forwarder.onStdout((chunk) => {
      this.#buffer += chunk;
      const lines = this.#buffer.split('\n');
      this.#buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const answer = JSON.parse(line) as Record<string, unknown>;
        const id = answer['id'];
        if (typeof id !== 'number') continue;
        this.#pending.get(id)?.resolve(answer);
        this.#pending.delete(id);
      }
    });
  }

  /**
   * Gives a pair a new profile (both ways, or `bToA` for the way back), for packets arriving from
   * now on; packets already on their way keep their delivery time. Resolves once the forwarder
   * applied it.
   */
  async setProfile(pair: WanPair): Promise<void> {
    for (const direction of validateWanPair(pair, this.#endpoints, 'setProfile'))
      await this.#request({ op: 'set', ...direction });
  }

  /** The forwarder's counters now. */
  async counters(): Promise<WanCounters> {
    const answer = await this.#request({ op: 'counters' });
    return {
      directions: answer['directions'] as WanDirectionCounters[],
      unimpaired: answer['unimpaired'] as number,
      sendErrors: answer['sendErrors'] as number,
    };
  }

  /** One direction's counters now (zeros when it carried nothing yet). */
  async direction(from: string, to: string): Promise<WanDirectionCounters> {
    const found = (await this.counters()).directions.find((d) => d.from === from && d.to === to);
    return found ?? { from, to, forwarded: 0, bytes: 0, lossDropped: 0, queueDropped: 0 };
  }

  #request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.forwarder.exit)
      return Promise.reject(new WanControlError(`the WAN forwarder has exited:\n${this.forwarder.output}`));
    const id = this.#nextId++;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(
          new WanControlError(
            `the WAN forwarder did not answer ${body['op'] as string} in ${CONTROL_TIMEOUT_MS} ms:\n${this.forwarder.output.slice(-4000)}`,
          ),
        );
      }, CONTROL_TIMEOUT_MS);
      this.#pending.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          if (typeof answer['error'] === 'string') reject(new WanControlError(answer['error']));
          else resolvePromise(answer);
        },
      });
      this.forwarder.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }
}

interface PlannedPort {
  readonly label: string;
  readonly wanIf: string;
  readonly peerIf: string;
  readonly ns: Netns;
  readonly ifname: string;
  readonly cidr: string;
}

/**
 * The WAN as `buildInternet` lays it out: ports are planned one by one (a veth pair created inside
 * the `wan` namespace), then wired at once — offloads off for every end in one call, the peer ends
 * moved into their namespaces — and the forwarder started.
 */
export class WanBuilder {
  readonly #ports: PlannedPort[] = [];

  private constructor(
    readonly ns: Netns,
    private readonly spec: { seed: number; default: WanSpec['default']; directions: WanDirection[] },
    private readonly endpoints: ReadonlySet<string>,
  ) {}

  /** Validates the spec (before anything is built) and creates the `wan` namespace. */
  static async create(tb: Testbed, spec: WanSpec, endpoints: ReadonlySet<string>): Promise<WanBuilder> {
    const valid = validateWanSpec(spec, endpoints);
    const ns = await tb.namespace('wan');
    // The forwarder's namespace speaks no IP itself: no IPv6 link-local chatter from its ports.
    await ns.sysctl('net.ipv6.conf.all.disable_ipv6', '1');
    await ns.sysctl('net.ipv6.conf.default.disable_ipv6', '1');
    return new WanBuilder(ns, valid, endpoints);
  }

  /** A port for `ns`'s interface `ifname` (address `cidr`), on the WAN endpoint `label`. */
  async port(ns: Netns, ifname: string, cidr: string, label: string): Promise<void> {
    const i = this.#ports.length;
    const port = { label, wanIf: `w${i}`, peerIf: `t${i}`, ns, ifname, cidr };
    await this.ns.ip(['link', 'add', port.wanIf, 'type', 'veth', 'peer', 'name', port.peerIf]);
    this.#ports.push(port);
  }

  /**
   * Wires every port and starts the forwarder. Offloads go off on both ends: a frame must carry
   * its real checksum and be at most one MTU, since the forwarder re-sends it as bytes (a
   * checksum-offloaded or segmentation-offloaded frame would arrive corrupt or oversized).
   */
  async start(): Promise<Wan> {
    await this.ns.exec([PYTHON, FORWARDER, 'offloads', ...this.#ports.flatMap((p) => [p.wanIf, p.peerIf])]);
    for (const port of this.#ports) {
      await this.ns.ip(['link', 'set', port.peerIf, 'netns', port.ns.name, 'name', port.ifname]);
      await this.ns.up(port.wanIf);
      await port.ns.up(port.ifname);
      await port.ns.addAddress(port.ifname, port.cidr);
    }
    const config = {
      seed: this.spec.seed,
      default: this.spec.default ?? null,
      links: this.spec.directions,
      ports: this.#ports.map((p) => ({ ifname: p.wanIf, label: p.label })),
    };
    const forwarder = this.ns.spawn('wan-forwarder', [
      'nice',
      '-n',
      NICE,
      PYTHON,
      '-u',
      FORWARDER,
      'run',
      JSON.stringify(config),
    ]);
    await forwarder.waitForOutput(/^ready$/m);
    return new Wan(this.ns, forwarder, this.endpoints);
  }
}
