import { createSocket, type Socket } from 'node:dgram';
import { keyBytes } from '../keys';
import { isDisco } from '../protocol/disco';

/** Sends packets to the relay; `RelayClient` in production. */
export interface PacketSink {
  send(destinationKey: Buffer, packet: Buffer): boolean;
}

/**
 * The edge's side of relayed paths: one loopback UDP socket per peer. WireGuard's endpoint for a
 * relayed peer is `127.0.0.1:<its shim port>`; what WireGuard sends there goes into the relay
 * connection addressed to the peer's key, and what the relay delivers from that key comes out of the
 * same socket towards WireGuard — so WireGuard sees one stable endpoint per peer and never roams away
 * from it. Disco probes arriving through the relay are handed to `onDisco` instead.
 */
export class RelayShims {
  readonly #byKey = new Map<string, { socket: Socket; key: Buffer; port: number }>();
  /** WireGuard's UDP port on this host (127.0.0.1:<port>). */
  wireguardPort = 0;
  /** Packets from the relay for peers without a shim, or before WireGuard's port is known. */
  dropped = 0;

  constructor(
    private readonly relay: PacketSink,
    private readonly onDisco: (sourceKey: Buffer, packet: Buffer) => void,
  ) {}

  /** Opens (or returns) the shim of a peer; resolves with its loopback port. */
  async add(peerPublicKey: string): Promise<number> {
    const hex = keyBytes(peerPublicKey).toString('hex');
    const existing = this.#byKey.get(hex);
    if (existing) return existing.port;
    const key = keyBytes(peerPublicKey);
    const socket = createSocket({ type: 'udp4' });
    socket.on('message', (packet, from) => {
      // Only WireGuard on this host talks to a shim.
      if (from.address === '127.0.0.1') this.relay.send(key, packet);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.on('error', () => undefined);
    const port = socket.address().port;
    this.#byKey.set(hex, { socket, key, port });
    return port;
  }

  /** The loopback endpoint WireGuard should use for a relayed peer. */
  endpointOf(peerPublicKey: string): string | null {
    const shim = this.#byKey.get(keyBytes(peerPublicKey).toString('hex'));
    return shim ? `127.0.0.1:${shim.port}` : null;
  }

  /** A packet the relay delivered from `sourceKey`. */
  deliver(sourceKey: Buffer, packet: Buffer): void {
    if (isDisco(packet)) {
      this.onDisco(sourceKey, packet);
      return;
    }
    const shim = this.#byKey.get(sourceKey.toString('hex'));
    if (!shim || this.wireguardPort === 0) {
      this.dropped++;
      return;
    }
    shim.socket.send(packet, this.wireguardPort, '127.0.0.1');
  }

  close(): void {
    for (const { socket } of this.#byKey.values()) socket.close();
    this.#byKey.clear();
  }
}
