import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { randomBytes } from 'node:crypto';
import type { RelayAddress } from '../domain/relay-choice';
import {
  encodeFrame,
  encodeJsonFrame,
  encodePacketFrame,
  FrameDecoder,
  FrameType,
  KEY_BYTES,
  PROTOCOL_VERSION,
  type RelayErrorBody,
  type ServerHello,
} from '../protocol/frames';

export class RelayConnectError extends Error {
  override readonly name = 'RelayConnectError';
  readonly code = 'RELAY_CONNECT_FAILED' as const;
}

/** The relay refused this edge (bad or expired admission token): retrying with the same token will not help soon. */
export class RelayRejectedError extends Error {
  override readonly name = 'RelayRejectedError';
  readonly code = 'RELAY_REJECTED' as const;
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface RelayClientOptions {
  readonly relay: RelayAddress;
  /** The admission token the control plane signed for this (job, key). */
  readonly token: string;
  /** Called for every packet the relay delivers: the source's public key (32 bytes) and the packet. */
  readonly onPacket: (sourceKey: Buffer, packet: Buffer) => void;
  /** Called on every connection state change. */
  readonly onState?: (state: 'connected' | 'disconnected', detail: string) => void;
  /** Trusted CA (PEM) for a TLS relay; default the system's. */
  readonly ca?: string;
  /** First reconnect delay, doubling up to `maxBackoffMs`. Defaults 50 and 2 000 ms. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A ping every this many ms; the connection is dropped when nothing arrived for 3 intervals. Default 5 000. */
  readonly keepaliveMs?: number;
  /** Give up a connection attempt after this long. Default 5 000 ms. */
  readonly connectTimeoutMs?: number;
  /** Packets are dropped (like a router would) while this many bytes wait to be written. Default 4 MiB. */
  readonly maxQueuedBytes?: number;
}

export interface RelayClientStats {
  connects: number;
  sentPackets: number;
  sentBytes: number;
  receivedPackets: number;
  receivedBytes: number;
  /** Packets dropped because the connection was down or its send queue full. */
  droppedPackets: number;
}

/**
 * An edge's connection to its job's relay: one TCP (or TLS) connection carrying packets keyed by
 * WireGuard public key. Reconnects by itself (exponential backoff) for as long as it is open; packets
 * sent while it is down are dropped and counted — WireGuard and the TCP inside it retransmit.
 */
export class RelayClient {
  readonly stats: RelayClientStats = {
    connects: 0,
    sentPackets: 0,
    sentBytes: 0,
    receivedPackets: 0,
    receivedBytes: 0,
    droppedPackets: 0,
  };
  #socket: Socket | undefined;
  #corked = false;
  #ready = false;
  #closed = false;
  #backoff: number;
  #hello: ServerHello | undefined;
  #lastReceived = 0;
  #keepalive: NodeJS.Timeout | undefined;
  #reconnect: NodeJS.Timeout | undefined;
  #firstHello: { resolve: (hello: ServerHello) => void; reject: (error: Error) => void } | undefined;
  readonly #pings = new Map<string, { sentAt: number; resolve: (rttMs: number) => void }>();

  constructor(private readonly options: RelayClientOptions) {
    this.#backoff = options.initialBackoffMs ?? 50;
  }

  get relayId(): string {
    return this.options.relay.relayId;
  }
  get connected(): boolean {
    return this.#ready;
  }
  /** The last hello of the relay. */
  get hello(): ServerHello | undefined {
    return this.#hello;
  }

  /**
   * Connects and resolves with the relay's hello; rejects when the first attempt fails (the caller
   * may try another relay). After that, the client reconnects by itself until `close()`.
   */
  start(): Promise<ServerHello> {
    return new Promise((resolve, reject) => {
      this.#firstHello = { resolve, reject };
      this.#connect();
    });
  }

  /** Sends a packet to the peer with `destinationKey` (32 bytes); false when it was dropped. */
  send(destinationKey: Buffer, packet: Buffer): boolean {
    const socket = this.#socket;
    if (!this.#ready || !socket || socket.writableLength > (this.options.maxQueuedBytes ?? 4 * 1024 * 1024)) {
      this.stats.droppedPackets++;
      return false;
    }
    // Frames sent in one tick (WireGuard sends in bursts) leave in one writev, not one syscall each.
    if (!this.#corked) {
      this.#corked = true;
      socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        socket.uncork();
      });
    }
    socket.write(encodePacketFrame(FrameType.SendPacket, destinationKey, packet));
    this.stats.sentPackets++;
    this.stats.sentBytes += packet.length;
    return true;
  }

  /** Round trip to the relay in ms (rejects after `timeoutMs` or while disconnected). */
  ping(timeoutMs = 2_000): Promise<number> {
    const socket = this.#socket;
    if (!this.#ready || !socket) return Promise.reject(new RelayConnectError('relay not connected'));
    const id = randomBytes(8);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pings.delete(id.toString('hex'));
        reject(new RelayConnectError(`relay did not answer a ping within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pings.set(id.toString('hex'), {
        sentAt: performance.now(),
        resolve: (rtt) => {
          clearTimeout(timer);
          resolve(rtt);
        },
      });
      socket.write(encodeFrame(FrameType.Ping, id));
    });
  }

  /** Closes the connection for good. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#reconnect);
    clearInterval(this.#keepalive);
    this.#socket?.destroy();
    this.#ready = false;
    this.#firstHello?.reject(new RelayConnectError('closed'));
    this.#firstHello = undefined;
  }

  #connect(): void {
    if (this.#closed) return;
    const { relay } = this.options;
    const socket: Socket = relay.tls
      ? tlsConnect({
          host: relay.host,
          port: relay.port,
          servername: relay.servername ?? relay.host,
          ...(this.options.ca ? { ca: this.options.ca } : {}),
        })
      : netConnect({ host: relay.host, port: relay.port });
    this.#socket = socket;
    socket.setNoDelay(true);
    const decoder = new FrameDecoder();
    const connectTimer = setTimeout(
      () => socket.destroy(new RelayConnectError(`no hello from ${relay.host}:${relay.port}`)),
      this.options.connectTimeoutMs ?? 5_000,
    );
    let failure = 'connection closed';
    socket.once(relay.tls ? 'secureConnect' : 'connect', () => {
      socket.write(
        encodeJsonFrame(FrameType.ClientHello, { v: PROTOCOL_VERSION, token: this.options.token }),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      this.#lastReceived = performance.now();
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch (error) {
        socket.destroy(error as Error);
        return;
      }
      for (const frame of frames) {
        switch (frame.type) {
          case FrameType.RecvPacket: {
            if (frame.body.length < KEY_BYTES) break;
            this.stats.receivedPackets++;
            this.stats.receivedBytes += frame.body.length - KEY_BYTES;
            this.options.onPacket(frame.body.subarray(0, KEY_BYTES), frame.body.subarray(KEY_BYTES));
            break;
          }
          case FrameType.ServerHello: {
            clearTimeout(connectTimer);
            this.#hello = JSON.parse(frame.body.toString('utf8')) as ServerHello;
            this.#ready = true;
            this.#backoff = this.options.initialBackoffMs ?? 50;
            this.stats.connects++;
            this.#startKeepalive(socket);
            this.options.onState?.('connected', `${relay.relayId} (${relay.host}:${relay.port})`);
            this.#firstHello?.resolve(this.#hello);
            this.#firstHello = undefined;
            break;
          }
          case FrameType.Ping:
            socket.write(encodeFrame(FrameType.Pong, frame.body));
            break;
          case FrameType.Pong: {
            const ping = this.#pings.get(frame.body.toString('hex'));
            if (ping) {
              this.#pings.delete(frame.body.toString('hex'));
              ping.resolve(performance.now() - ping.sentAt);
            }
            break;
          }
          case FrameType.Error: {
            const error = JSON.parse(frame.body.toString('utf8')) as RelayErrorBody;
            failure = `${error.code}: ${error.message}`;
            if (this.#firstHello && error.code === 'admission-rejected') {
              this.#firstHello.reject(
                new RelayRejectedError(error.code, `relay ${relay.relayId} refused: ${error.message}`),
              );
              this.#firstHello = undefined;
            }
            break;
          }
          default:
            break;
        }
      }
    });
    socket.on('error', (error) => {
      failure = error.message;
    });
    socket.on('close', () => {
      clearTimeout(connectTimer);
      clearInterval(this.#keepalive);
      const wasReady = this.#ready;
      this.#ready = false;
      if (this.#socket === socket) this.#socket = undefined;
      if (wasReady) this.options.onState?.('disconnected', failure);
      if (this.#firstHello) {
        this.#firstHello.reject(
          new RelayConnectError(`relay ${relay.relayId} (${relay.host}:${relay.port}): ${failure}`),
        );
        this.#firstHello = undefined;
        this.#closed = true;
        return;
      }
      if (this.#closed) return;
      const delay = this.#backoff * (0.75 + Math.random() / 2);
      this.#backoff = Math.min(this.#backoff * 2, this.options.maxBackoffMs ?? 2_000);
      this.#reconnect = setTimeout(() => this.#connect(), delay);
    });
  }

  #startKeepalive(socket: Socket): void {
    const interval = this.options.keepaliveMs ?? 5_000;
    clearInterval(this.#keepalive);
    this.#keepalive = setInterval(() => {
      if (performance.now() - this.#lastReceived > 3 * interval) {
        socket.destroy(new RelayConnectError('relay silent for 3 keepalive intervals'));
        return;
      }
      socket.write(encodeFrame(FrameType.Ping, randomBytes(8)));
    }, interval);
    this.#keepalive.unref();
  }
}
