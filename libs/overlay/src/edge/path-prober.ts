import { randomBytes } from 'node:crypto';
import type { RemoteInfo, Socket } from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OverlayCandidate } from '@gpunet/contracts';
import type { ConfirmedCandidate } from '../domain/path-selection';
import { type DiscoMessage, discoSender, isDisco, openDisco, sealDisco } from '../protocol/disco';
import type { PacketSink } from '../relay/relay-shims';

/** A peer to probe: its key, the pair's disco key and its candidate endpoints. */
export interface ProbePeer {
  readonly publicKey: string;
  readonly keyBytes: Buffer;
  readonly discoKey: Buffer;
  readonly candidates: readonly OverlayCandidate[];
}

export interface ProbeResult {
  /** Candidates that answered a ping, with their RTT. */
  readonly confirmed: ConfirmedCandidate[];
  /** RTT of a ping through the relay; null when it did not answer. */
  readonly relayRttMs: number | null;
  /** The peer told us it confirmed a direct path to us too. */
  readonly peerConfirmedUs: boolean;
}

export interface ProbeOptions {
  /** Longest time spent looking for direct paths. Default 3 000 ms. */
  readonly windowMs?: number;
  /** Pings go out every this many ms. Default 100. */
  readonly intervalMs?: number;
}

export interface BulkOptions {
  /** Packets in the burst. Default 96 (≈ 115 KB). */
  readonly packets?: number;
  /** Bytes of padding per packet. Default 1 200. */
  readonly padding?: number;
  /** How long to wait for the receiver's report. Default 1 500 ms. */
  readonly timeoutMs?: number;
  /**
   * Bursts to try before giving up (null). The burst's last datagram and the receiver's report are
   * single UDP datagrams: on a busy host either may be dropped, and one lost datagram must not make
   * the path's throughput unknown. Default 2.
   */
  readonly attempts?: number;
}

interface PeerState {
  readonly peer: ProbePeer;
  readonly hex: string;
  readonly targets: Map<string, OverlayCandidate['kind']>;
  readonly pending: Map<string, { via: string; sentAt: number }>;
  readonly confirmed: Map<string, ConfirmedCandidate>;
  relayRttMs: number | null;
  peerConfirmedUs: boolean;
  /** We told the peer (in a ping) that we confirmed a direct path to it. */
  toldPeer: boolean;
  /** We answered the peer's throughput burst sent to our socket (it needs the socket no more). */
  answeredDirectBulk: boolean;
  readonly incoming: Map<number, { first: number; last: number; packets: number; bytes: number }>;
  readonly reports: Map<number, (report: { packets: number; bytes: number; spanMicros: number }) => void>;
}

const RELAY = 'relay';

/**
 * Finds direct paths to a job's peers over the UDP port WireGuard will use (ADR 0020): authenticated
 * pings to every candidate of every peer, answered by pongs; the relay carries pings too, for its
 * RTT. Also answers the peers' probes and measures a path's throughput with a bounded burst.
 */
export class PathProber {
  readonly #peers = new Map<string, PeerState>();
  #socket: Socket | undefined;
  readonly #changed = new Set<() => void>();

  constructor(
    private readonly ownKey: Buffer,
    peers: readonly ProbePeer[],
    private readonly relay: PacketSink | null,
  ) {
    for (const peer of peers) {
      const hex = peer.keyBytes.toString('hex');
      this.#peers.set(hex, {
        peer,
        hex,
        targets: new Map(peer.candidates.map((c) => [c.endpoint, c.kind])),
        pending: new Map(),
        confirmed: new Map(),
        relayRttMs: null,
        peerConfirmedUs: false,
        toldPeer: false,
        answeredDirectBulk: false,
        incoming: new Map(),
        reports: new Map(),
      });
    }
  }

  /** Sends and answers direct probes on `socket` until `detachSocket()`. */
  attachSocket(socket: Socket): void {
    this.#socket = socket;
  }

  detachSocket(): void {
    this.#socket = undefined;
  }

  /** A datagram that arrived on the probing socket (non-disco datagrams are ignored). */
  handleDatagram(datagram: Buffer, from: RemoteInfo): void {
    if (isDisco(datagram)) this.#handle(datagram, `${from.address}:${from.port}`);
  }

  /** A disco packet the relay delivered. */
  handleRelayed(sourceKey: Buffer, packet: Buffer): void {
    if (sourceKey.equals(discoSender(packet))) this.#handle(packet, RELAY);
  }

  /** Whether every peer has a direct path confirmed by both ends. */
  allDirect(): boolean {
    return [...this.#peers.values()].every((s) => s.confirmed.size > 0 && s.peerConfirmedUs && s.toldPeer);
  }

  /**
   * Probes until every peer has a direct path both ends confirmed, or the window ends; returns what
   * each peer's probes found (by hex key).
   */
  async probe(options: ProbeOptions = {}): Promise<Map<string, ProbeResult>> {
    const deadline = performance.now() + (options.windowMs ?? 3_000);
    const interval = options.intervalMs ?? 100;
    for (let round = 0; performance.now() < deadline && !this.allDirect(); round++) {
      for (const state of this.#peers.values()) {
        const direct = state.confirmed.size > 0;
        if (!(direct && state.peerConfirmedUs && state.toldPeer)) {
          for (const endpoint of state.targets.keys()) this.#ping(state, endpoint, direct);
          if (direct) state.toldPeer = true;
        }
        if (this.relay && state.relayRttMs === null && round % 3 === 0) this.#ping(state, RELAY, direct);
      }
      await sleep(interval);
    }
    return this.results();
  }

  /**
   * Keeps answering until every peer for which `needsUs` holds has finished with our socket — its
   * throughput burst answered — or until `deadline` (performance.now() ms). The two ends of a pair
   * finish probing at different moments; handing the port to WireGuard earlier would cut the
   * slower end's measurement off.
   */
  async linger(needsUs: (peerHex: string) => boolean, deadline: number): Promise<void> {
    const settled = () =>
      [...this.#peers.values()].every((s) => !needsUs(s.hex) || s.answeredDirectBulk) ||
      performance.now() >= deadline;
    if (settled()) return;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (!settled()) return;
        clearTimeout(timer);
        this.#changed.delete(check);
        resolve();
      };
      const timer = setTimeout(check, Math.max(0, deadline - performance.now()));
      this.#changed.add(check);
    });
  }

  results(): Map<string, ProbeResult> {
    return new Map(
      [...this.#peers.values()].map((s) => [
        s.hex,
        {
          confirmed: [...s.confirmed.values()],
          relayRttMs: s.relayRttMs,
          peerConfirmedUs: s.peerConfirmedUs,
        },
      ]),
    );
  }

  /**
   * Sends a bounded burst to a peer over `via` (an endpoint, or `'relay'`) and resolves with the rate
   * the peer measured in bits/s, or null when its report did not come back in time.
   */
  async measure(peerHex: string, via: string, options: BulkOptions = {}): Promise<number | null> {
    for (let attempt = 1; attempt <= Math.max(1, options.attempts ?? 2); attempt++) {
      const bps = await this.#measureOnce(peerHex, via, options);
      if (bps !== null) return bps;
    }
    return null;
  }

  async #measureOnce(peerHex: string, via: string, options: BulkOptions): Promise<number | null> {
    const state = this.#peers.get(peerHex);
    if (!state) return null;
    const probeId = randomBytes(4).readUInt32BE(0);
    const packets = options.packets ?? 96;
    const padding = options.padding ?? 1_200;
    const report = new Promise<{ packets: number; bytes: number; spanMicros: number } | null>((resolve) => {
      const timer = setTimeout(() => {
        state.reports.delete(probeId);
        resolve(null);
      }, options.timeoutMs ?? 1_500);
      state.reports.set(probeId, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
    let bytes = 0;
    for (let seq = 0; seq < packets; seq++) {
      const packet = this.#seal(state, { type: 'bulk', probeId, seq, padding });
      bytes += packet.length;
      this.#send(via, state, packet);
      // Yield now and then so the burst does not monopolise the event loop or overflow socket buffers at once.
      if (seq % 16 === 15) await new Promise((resolve) => setImmediate(resolve));
    }
    this.#send(via, state, this.#seal(state, { type: 'bulk-end', probeId, packets, bytes }));
    const r = await report;
    if (!r || r.packets < 2 || r.spanMicros <= 0) return null;
    // n packets arrive over n-1 intervals.
    return Math.round(((r.bytes * (r.packets - 1)) / r.packets) * 8 * (1e6 / r.spanMicros));
  }

  #seal(state: PeerState, message: DiscoMessage): Buffer {
    return sealDisco(message, this.ownKey, state.peer.discoKey);
  }

  #send(via: string, state: PeerState, packet: Buffer): void {
    if (via === RELAY) {
      this.relay?.send(state.peer.keyBytes, packet);
      return;
    }
    const socket = this.#socket;
    if (!socket) return;
    const colon = via.lastIndexOf(':');
    try {
      socket.send(packet, Number(via.slice(colon + 1)), via.slice(0, colon));
    } catch {
      // socket closed meanwhile
    }
  }

  #ping(state: PeerState, via: string, confirmed: boolean): void {
    const txid = randomBytes(12);
    state.pending.set(txid.toString('hex'), { via, sentAt: performance.now() });
    this.#send(via, state, this.#seal(state, { type: 'ping', txid, confirmed }));
  }

  #handle(packet: Buffer, via: string): void {
    const state = this.#peers.get(discoSender(packet).toString('hex'));
    if (!state) return;
    const message = openDisco(packet, state.peer.discoKey);
    if (!message) return;
    this.#onMessage(state, message, packet, via);
    for (const listener of [...this.#changed]) listener();
  }

  #onMessage(state: PeerState, message: DiscoMessage, packet: Buffer, via: string): void {
    switch (message.type) {
      case 'ping':
        if (via !== RELAY) {
          if (message.confirmed) state.peerConfirmedUs = true;
          // A peer-reflexive candidate: where the peer's probe really came from.
          if (!state.targets.has(via)) state.targets.set(via, 'reflexive');
        }
        this.#send(
          via,
          state,
          this.#seal(state, {
            type: 'pong',
            txid: message.txid,
            observed: via === RELAY ? '0.0.0.0:0' : via,
          }),
        );
        break;
      case 'pong': {
        const pending = state.pending.get(message.txid.toString('hex'));
        if (!pending) break;
        state.pending.delete(message.txid.toString('hex'));
        const rttMs = performance.now() - pending.sentAt;
        if (pending.via === RELAY) {
          if (via === RELAY) state.relayRttMs = Math.min(state.relayRttMs ?? Infinity, rttMs);
        } else if (via !== RELAY) {
          const previous = state.confirmed.get(via);
          state.confirmed.set(via, {
            endpoint: via,
            kind: state.targets.get(pending.via) ?? 'reflexive',
            rttMs: Math.min(previous?.rttMs ?? Infinity, rttMs),
          });
        }
        break;
      }
      case 'bulk': {
        const now = performance.now();
        const entry = state.incoming.get(message.probeId) ?? { first: now, last: now, packets: 0, bytes: 0 };
        entry.last = now;
        entry.packets++;
        entry.bytes += packet.length;
        state.incoming.set(message.probeId, entry);
        break;
      }
      case 'bulk-end': {
        const entry = state.incoming.get(message.probeId);
        state.incoming.delete(message.probeId);
        if (via !== RELAY) state.answeredDirectBulk = true;
        this.#send(
          via,
          state,
          this.#seal(state, {
            type: 'bulk-report',
            probeId: message.probeId,
            packets: entry?.packets ?? 0,
            bytes: entry?.bytes ?? 0,
            spanMicros: entry ? Math.round((entry.last - entry.first) * 1000) : 0,
          }),
        );
        break;
      }
      case 'bulk-report':
        state.reports.get(message.probeId)?.({
          packets: message.packets,
          bytes: message.bytes,
          spanMicros: message.spanMicros,
        });
        state.reports.delete(message.probeId);
        break;
    }
  }
}
