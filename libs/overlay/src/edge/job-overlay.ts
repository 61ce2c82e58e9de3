import { createSocket, type Socket } from 'node:dgram';
import { networkInterfaces } from 'node:os';
import type {
  EdgePathReport,
  NatMapping,
  OverlayCandidate,
  OverlayEndpoint,
  OverlayPeer,
  PeerPath,
} from '@gpunet/contracts';
import { parseCidr } from '../domain/addressing';
import { choosePath, classifyNat, type PathChoice } from '../domain/path-selection';
import type { RelayAddress } from '../domain/relay-choice';
import { discoKey, generateKeyPair, interfaceName, keyBytes, type KeyPair } from '../keys';
import { configureRankInterface, type NetnsRef } from '../netns/netns';
import { RelayClient, type RelayClientStats } from '../relay/relay-client';
import { RelayShims } from '../relay/relay-shims';
import {
  kernelWireGuardAvailable,
  startKernelWireGuard,
  startUserspaceWireGuard,
  type WireGuardDevice,
} from '../wireguard/device';
import type { PeerConfig } from '../wireguard/uapi';
import { type BulkOptions, PathProber, type ProbeOptions } from './path-prober';
import { StunClient } from './stun-client';

export type OverlayLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface AttachOverlayOptions {
  readonly jobId: string;
  /** The job network, `100.96.3.0/24`. */
  readonly networkCidr: string;
  /** This host's overlay address. */
  readonly address: string;
  /** Relays in the order to try (`rankRelays`); empty: direct paths only. */
  readonly relays: readonly RelayAddress[];
  /** Where the ranks run: the interface is moved there. */
  readonly rankNetns: NetnsRef;
  /** The interface's name inside the rank namespace. Default `gpunet0`. */
  readonly rankIfname?: string;
  /** Default 1420 (WireGuard over IPv4/IPv6 in a 1500-byte underlay). */
  readonly mtu?: number;
  /** WireGuard's UDP port on the host; 0 (default) picks a free one. */
  readonly listenPort?: number;
  /** `auto` (default): the kernel module when the kernel has it, else wireguard-go. */
  readonly backend?: 'auto' | 'userspace' | 'kernel';
  /** The host's addresses to offer as direct candidates; default: its non-loopback IPv4 addresses. */
  readonly hostAddresses?: readonly string[];
  /** Keepalive interval towards every peer (keeps NAT mappings open), s. Default 10. */
  readonly keepaliveSec?: number;
  /** Trusted CA (PEM) of TLS relays. */
  readonly relayCa?: string;
  /** How long each STUN query waits. Default 1 000 ms. */
  readonly stunTimeoutMs?: number;
  /** Overrides for the relay client (tests shorten its keepalive). */
  readonly relayKeepaliveMs?: number;
  readonly wireguardGo?: string;
  readonly log?: OverlayLog;
  /** Keys to use instead of fresh ones (tests). */
  readonly keys?: KeyPair;
}

export interface ConnectPeersOptions extends ProbeOptions {
  /**
   * Lets this edge's key into the job on the relays (signed by the control plane once it knows the
   * key from `endpoint`); without it no relay is used.
   */
  readonly admissionToken?: string | null;
  /** Measure each path's throughput with a bounded burst (default true). */
  readonly measureThroughput?: boolean;
  readonly bulk?: BulkOptions;
  /** Never use a direct path (benchmarks of the relayed path). */
  readonly forceRelay?: boolean;
  /**
   * How long the end that does not initiate a pair's handshake waits for it before initiating
   * itself (default 1 s).
   */
  readonly handshakeWaitMs?: number;
}

interface PeerEntry {
  readonly peer: OverlayPeer;
  readonly hex: string;
  choice: PathChoice;
  throughputBps: number | null;
}

const IGNORED_INTERFACES = /^(lo|gpn|wg|docker|br-|veth|virbr|tun|tap)/;

/** The host's own IPv4 addresses, the interfaces of overlays and containers left out. */
export const hostIpv4Addresses = (): string[] =>
  Object.entries(networkInterfaces())
    .filter(([name]) => !IGNORED_INTERFACES.test(name))
    .flatMap(([, addresses]) => addresses ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal)
    .map((a) => a.address);

const bindUdp = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = createSocket({ type: 'udp4' });
    socket.once('error', reject);
    socket.bind(port, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });

/**
 * One host's end of one job's overlay (ADR 0020). `attach` generates the key pair, creates the
 * WireGuard interface in the rank's namespace, binds the port WireGuard will use and learns its
 * public mapping from a relay's STUN ports; `connectPeers` (with the admission token the control
 * plane signed for the key) connects to the job's relay, probes direct paths, hands the port to
 * WireGuard and configures every peer direct or through a loopback shim to the relay.
 */
export class JobOverlay {
  readonly #peers = new Map<string, PeerEntry>();
  #probeSocket: Socket | undefined;
  #prober: PathProber | undefined;
  #detached = false;
  #measuredAt = new Date().toISOString();
  #endpoint: OverlayEndpoint;
  #relay: RelayClient | null = null;
  #shims: RelayShims | null = null;

  private constructor(
    private readonly options: AttachOverlayOptions,
    private readonly keys: KeyPair,
    private readonly device: WireGuardDevice,
    probeSocket: Socket,
    private readonly stun: StunClient,
    /** WireGuard's UDP port on the host (the probing socket's, handed over). */
    readonly listenPort: number,
  ) {
    this.#probeSocket = probeSocket;
    this.#endpoint = {
      jobId: options.jobId,
      publicKey: keys.publicKey,
      address: options.address,
      candidates: [],
      natMapping: 'unknown',
      relayId: null,
    };
  }

  /** What the control plane needs to know about this end: key, candidates, NAT mapping, relay. */
  get endpoint(): OverlayEndpoint {
    return this.#endpoint;
  }

  get publicKey(): string {
    return this.keys.publicKey;
  }
  get ifname(): string {
    return this.device.ifname;
  }
  get backend(): WireGuardDevice['backend'] {
    return this.device.backend;
  }
  get relayStats(): Readonly<RelayClientStats> | null {
    return this.#relay?.stats ?? null;
  }
  get relayConnected(): boolean {
    return this.#relay?.connected ?? false;
  }

  static async attach(options: AttachOverlayOptions): Promise<JobOverlay> {
    const log = options.log ?? (() => undefined);
    const keys = options.keys ?? generateKeyPair();
    const ifname = interfaceName(options.jobId, keys.publicKey);
    const backend =
      options.backend === 'auto' || options.backend === undefined
        ? (await kernelWireGuardAvailable())
          ? 'kernel'
          : 'userspace'
        : options.backend;
    const device =
      backend === 'kernel'
        ? await startKernelWireGuard(ifname)
        : await startUserspaceWireGuard(ifname, {
            ...(options.wireguardGo ? { binary: options.wireguardGo } : {}),
            onLog: (line) => log('debug', line, { ifname }),
          });
    const cleanup: (() => unknown)[] = [() => device.close()];
    try {
      await device.configure({ privateKey: keys.privateKey });
      const rankIfname = options.rankIfname ?? 'gpunet0';
      await device.moveTo(options.rankNetns);
      await configureRankInterface(options.rankNetns, {
        ifname,
        name: rankIfname,
        address: options.address,
        prefixLength: parseCidr(options.networkCidr).prefixLength,
        mtu: options.mtu ?? 1420,
      });
      device.renamed(rankIfname);

      const socket = await bindUdp(options.listenPort ?? 0);
      cleanup.push(() => socket.close());
      const listenPort = socket.address().port;
      const stun = new StunClient();

      const overlay = new JobOverlay(options, keys, device, socket, stun, listenPort);
      socket.on('message', (datagram, from) => {
        if (!stun.handle(datagram)) overlay.#prober?.handleDatagram(datagram, from);
      });
      overlay.#endpoint = await overlay.#discoverEndpoint(socket);
      return overlay;
    } catch (error) {
      for (const step of cleanup.reverse())
        await Promise.resolve()
          .then(step)
          .catch(() => undefined);
      throw error;
    }
  }

  async #discoverEndpoint(socket: Socket): Promise<OverlayEndpoint> {
    const local = this.options.hostAddresses ?? hostIpv4Addresses();
    // The public mapping of the port, from the first relay whose STUN ports answer (no admission needed).
    let mapped: string[] = [];
    let stunRelay: RelayAddress | undefined;
    for (const relay of this.options.relays) {
      mapped = [];
      for (const port of relay.stunPorts) {
        const answer = await this.stun.query(socket, relay.host, port, this.options.stunTimeoutMs ?? 1_000);
        if (answer) mapped.push(answer);
      }
      if (mapped.length > 0) {
        stunRelay = relay;
        break;
      }
    }
    const natMapping: NatMapping = classifyNat(mapped, local, this.listenPort);
    const candidates: OverlayCandidate[] = local.map((a) => ({
      kind: 'host',
      endpoint: `${a}:${this.listenPort}`,
    }));
    if (natMapping === 'endpoint-independent') candidates.push({ kind: 'reflexive', endpoint: mapped[0]! });
    return {
      jobId: this.options.jobId,
      publicKey: this.keys.publicKey,
      address: this.options.address,
      candidates,
      natMapping,
      relayId: stunRelay?.relayId ?? null,
    };
  }

  /**
   * Connects to the job's other members: probes their direct candidates (and the relay) for up to
   * `windowMs`, hands the port to WireGuard, configures every peer (direct, or through its relay
   * shim) and returns the path report. Call it on every edge of the job at about the same time — the
   * control plane does — so that both ends probe (and punch) together.
   */
  async connectPeers(
    peers: readonly OverlayPeer[],
    options: ConnectPeersOptions = {},
  ): Promise<EdgePathReport> {
    const others = peers.filter((p) => p.publicKey !== this.keys.publicKey);
    const socket = this.#probeSocket;
    if (!socket)
      throw new Error('connectPeers was already called: the probing port belongs to WireGuard now');
    if (options.admissionToken) await this.#connectRelay(options.admissionToken);
    for (const peer of others) {
      const hex = keyBytes(peer.publicKey).toString('hex');
      this.#peers.set(hex, {
        peer,
        hex,
        choice: { path: 'unreachable', endpoint: null, rttMs: null },
        throughputBps: null,
      });
      await this.#shims?.add(peer.publicKey);
    }
    const prober = new PathProber(
      keyBytes(this.keys.publicKey),
      others.map((peer) => ({
        publicKey: peer.publicKey,
        keyBytes: keyBytes(peer.publicKey),
        discoKey: discoKey(this.keys.privateKey, peer.publicKey),
        candidates: options.forceRelay ? [] : peer.candidates,
      })),
      this.#relay,
    );
    this.#prober = prober;
    prober.attachSocket(socket);
    const started = performance.now();
    const results = await prober.probe(options);
    for (const entry of this.#peers.values()) {
      const result = results.get(entry.hex);
      entry.choice = choosePath(
        result?.confirmed ?? [],
        result?.relayRttMs != null ? { rttMs: result.relayRttMs } : null,
      );
      // A relay that is connected is worth trying even if its ping was lost.
      if (entry.choice.path === 'unreachable' && this.#relay)
        entry.choice = { path: 'relayed', endpoint: null, rttMs: null };
    }
    if (options.measureThroughput ?? true) {
      await Promise.all(
        [...this.#peers.values()].map(async (entry) => {
          const via =
            entry.choice.path === 'direct'
              ? entry.choice.endpoint
              : entry.choice.path === 'relayed'
                ? 'relay'
                : null;
          if (via) entry.throughputBps = await prober.measure(entry.hex, via, options.bulk);
        }),
      );
    }

    // Peers with a direct path measure it through our socket: let them finish before the hand-off.
    if (options.measureThroughput ?? true) {
      const direct = new Set(
        [...this.#peers.values()].filter((e) => e.choice.path === 'direct').map((e) => e.hex),
      );
      const lingerMs = (options.windowMs ?? 3_000) + (options.bulk?.timeoutMs ?? 1_500);
      await prober.linger((hex) => direct.has(hex), started + lingerMs);
    }

    // The hand-off: WireGuard takes over the port, and with it the NAT mappings the probes opened.
    prober.detachSocket();
    this.#probeSocket = undefined;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    if (this.#shims) this.#shims.wireguardPort = this.listenPort;
    const keepalive = this.options.keepaliveSec ?? 10;
    const configOf = (entry: PeerEntry, persistentKeepaliveSec: number): PeerConfig => ({
      publicKey: entry.peer.publicKey,
      endpoint:
        entry.choice.path === 'direct'
          ? entry.choice.endpoint
          : (this.#shims?.endpointOf(entry.peer.publicKey) ?? null),
      allowedIps: [`${entry.peer.address}/32`],
      persistentKeepaliveSec,
    });
    // Both ends hand off at about the same moment. If both sent a handshake initiation then, each
    // would answer the other's and drop its own, and neither session would confirm until WireGuard's
    // 5 s retry. So one end of each pair (the greater key) initiates at once, by its keepalive; the
    // other waits for that handshake, then turns its keepalive on, which initiates only if the first
    // initiation was lost (it reached this port before WireGuard had it).
    const entries = [...this.#peers.values()];
    const waiting = entries.filter(
      (entry) => entry.peer.publicKey > this.keys.publicKey && configOf(entry, 0).endpoint !== null,
    );
    await this.device.configure({
      listenPort: this.listenPort,
      replacePeers: true,
      peers: entries.map((entry) => configOf(entry, waiting.includes(entry) ? 0 : keepalive)),
    });
    if (waiting.length > 0 && keepalive > 0) {
      await this.#awaitHandshakes(
        waiting.map((entry) => entry.peer.publicKey),
        options.handshakeWaitMs ?? 1_000,
      );
      await this.device.configure({ peers: waiting.map((entry) => configOf(entry, keepalive)) });
    }
    this.#measuredAt = new Date().toISOString();
    this.options.log?.('info', 'overlay connected', {
      jobId: this.options.jobId,
      paths: [...this.#peers.values()].map((e) => ({
        peer: e.peer.address,
        path: e.choice.path,
        rttMs: e.choice.rttMs,
      })),
    });
    return this.pathReport();
  }

  /** Resolves once WireGuard reports a handshake with every one of `keys`, or after `timeoutMs`. */
  async #awaitHandshakes(keys: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const state = await this.device.state();
      const done = keys.every((key) => state.peers.some((p) => p.publicKey === key && p.lastHandshakeAtMs));
      if (done || performance.now() >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Connects to the first relay (in the job's order) that admits this key. */
  async #connectRelay(token: string): Promise<void> {
    const log = this.options.log ?? (() => undefined);
    for (const relay of this.options.relays) {
      const client: RelayClient = new RelayClient({
        relay,
        token,
        ...(this.options.relayCa ? { ca: this.options.relayCa } : {}),
        ...(this.options.relayKeepaliveMs ? { keepaliveMs: this.options.relayKeepaliveMs } : {}),
        onPacket: (source, packet) => this.#shims?.deliver(source, packet),
        onState: (state, detail) =>
          log(state === 'connected' ? 'info' : 'warn', `relay ${state}`, { detail }),
      });
      try {
        await client.start();
        this.#relay = client;
        this.#shims = new RelayShims(client, (source, packet) => this.#prober?.handleRelayed(source, packet));
        this.#endpoint = { ...this.#endpoint, relayId: relay.relayId };
        return;
      } catch (error) {
        log('warn', 'relay unreachable, trying the next', { relayId: relay.relayId, error: String(error) });
      }
    }
    log('warn', 'no relay admitted this edge: direct paths only', { jobId: this.options.jobId });
  }

  /** The current path report (WireGuard's counters read now). */
  async pathReport(): Promise<EdgePathReport> {
    const state = await this.device.state();
    const peers: PeerPath[] = [...this.#peers.values()].map((entry) => {
      const wg = state.peers.find((p) => p.publicKey === entry.peer.publicKey);
      return {
        peerPublicKey: entry.peer.publicKey,
        peerAddress: entry.peer.address,
        path: entry.choice.path,
        endpoint: entry.choice.path === 'direct' ? entry.choice.endpoint : null,
        relayId: entry.choice.path === 'relayed' ? (this.#relay?.relayId ?? null) : null,
        rttMs: entry.choice.rttMs === null ? null : Math.round(entry.choice.rttMs * 1000) / 1000,
        throughputBps: entry.throughputBps,
        txBytes: wg?.txBytes ?? 0,
        rxBytes: wg?.rxBytes ?? 0,
        lastHandshakeAt: wg?.lastHandshakeAtMs ? new Date(wg.lastHandshakeAtMs).toISOString() : null,
      };
    });
    return {
      jobId: this.options.jobId,
      publicKey: this.keys.publicKey,
      address: this.options.address,
      natMapping: this.endpoint.natMapping,
      measuredAt: this.#measuredAt,
      peers,
    };
  }

  /** Removes the interface, the relay connection and the shims. Idempotent. */
  async detach(): Promise<void> {
    if (this.#detached) return;
    this.#detached = true;
    this.#relay?.close();
    this.#shims?.close();
    this.#probeSocket?.close();
    this.#probeSocket = undefined;
    await this.device.close();
  }
}

export const attachOverlay = (options: AttachOverlayOptions): Promise<JobOverlay> =>
  JobOverlay.attach(options);
