import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import {
  AdmissionError,
  type ClientHello,
  decodeStun,
  encodeBindingSuccess,
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  FrameType,
  KEY_BYTES,
  keyBytes,
  PROTOCOL_VERSION,
  type ServerHello,
  verifyAdmissionToken,
} from '@gpunet/overlay';
import { type RelayLimits, RelayTable } from '../domain/relay-table';

export interface RelayServerOptions {
  readonly relayId: string;
  /** Address to listen on. Default `0.0.0.0`. */
  readonly host?: string;
  /** TCP port of the framed protocol; 0 picks one. */
  readonly port: number;
  /** UDP ports answering STUN Binding requests (0 picks one). */
  readonly stunPorts: readonly number[];
  /** ed25519 keys (32 raw bytes, base64) whose admission tokens the relay accepts. */
  readonly verifyKeys: readonly string[];
  readonly limits: RelayLimits;
  /** Serve TLS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** A receiver whose send queue holds this many bytes gets no more packets until it drains. Default 4 MiB. */
  readonly maxQueuedBytes?: number;
  /** A connection must say hello within this time. Default 5 000 ms. */
  readonly helloTimeoutMs?: number;
  /** A connection that sends nothing for this long is closed (edges ping every 5 s). Default 30 000 ms. */
  readonly idleTimeoutMs?: number;
  /** Wall clock for token expiry. Default `Date.now`. */
  readonly now?: () => number;
  readonly log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** Why the relay refused a connection. */
export type RejectReason = 'bad-hello' | 'admission-rejected' | 'hello-timeout';

interface Connection {
  readonly id: number;
  readonly socket: Socket;
  key: Buffer | null;
}

/**
 * The relay (ADR 0020): edges hold one TCP (or TLS) connection each; `SendPacket` frames are forwarded
 * as `RecvPacket` frames — rewritten in place, never copied — to the destination key if, and only if,
 * it is connected under the sender's own job. Also answers STUN Binding requests on its UDP ports.
 */
export class RelayServer {
  readonly table: RelayTable;
  readonly rejected: Record<RejectReason, number> = {
    'bad-hello': 0,
    'admission-rejected': 0,
    'hello-timeout': 0,
  };
  stunRequests = 0;
  readonly #connections = new Map<number, Connection>();
  readonly #stun: UdpSocket[] = [];
  #server: Server | undefined;
  #nextId = 1;
  #port = 0;
  #prune: NodeJS.Timeout | undefined;

  constructor(private readonly options: RelayServerOptions) {
    this.table = new RelayTable(options.limits);
  }

  get port(): number {
    return this.#port;
  }
  get stunPorts(): number[] {
    return this.#stun.map((s) => s.address().port);
  }

  async start(): Promise<void> {
    const host = this.options.host ?? '0.0.0.0';
    const server = this.options.tls
      ? createTlsServer({ cert: this.options.tls.cert, key: this.options.tls.key }, (socket) =>
          this.#accept(socket),
        )
      : createTcpServer((socket) => this.#accept(socket));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    this.#port = typeof address === 'object' && address ? address.port : this.options.port;
    for (const port of this.options.stunPorts) {
      const socket = createSocket({ type: 'udp4' });
      socket.on('message', (datagram, from) => {
        const message = decodeStun(datagram);
        if (message?.kind !== 'request') return;
        this.stunRequests++;
        socket.send(
          encodeBindingSuccess(message.transactionId, from.address, from.port),
          from.port,
          from.address,
        );
      });
      socket.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(port, host, () => {
          socket.off('error', reject);
          resolve();
        });
      });
      this.#stun.push(socket);
    }
    this.#prune = setInterval(() => this.table.prune(performance.now(), 10 * 60_000), 60_000);
    this.#prune.unref();
    this.options.log?.('info', 'relay listening', {
      relayId: this.options.relayId,
      port: this.#port,
      stunPorts: this.stunPorts,
    });
  }

  /** Closes every connection and socket. Idempotent. */
  async stop(): Promise<void> {
    clearInterval(this.#prune);
    for (const socket of this.#stun.splice(0)) socket.close();
    for (const connection of this.#connections.values()) connection.socket.destroy();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #accept(socket: Socket): void {
    const connection: Connection = { id: this.#nextId++, socket, key: null };
    this.#connections.set(connection.id, connection);
    socket.setNoDelay(true);
    socket.setTimeout(this.options.idleTimeoutMs ?? 30_000, () => socket.destroy());
    const helloTimer = setTimeout(
      () => this.#reject(connection, 'hello-timeout', 'no hello'),
      this.options.helloTimeoutMs ?? 5_000,
    );
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch (error) {
        this.#reject(connection, 'bad-hello', (error as Error).message);
        return;
      }
      // Frames of one chunk bound for one receiver leave in one writev: cork while forwarding the chunk.
      const corked = new Set<Socket>();
      for (const frame of frames) {
        if (connection.key === null) {
          clearTimeout(helloTimer);
          this.#hello(connection, frame.type, frame.body);
          if (connection.key === null) return;
          continue;
        }
        switch (frame.type) {
          case FrameType.SendPacket:
            if (frame.body.length > KEY_BYTES) this.#forward(connection, frame.raw, frame.body, corked);
            break;
          case FrameType.Ping:
            socket.write(encodeFrame(FrameType.Pong, frame.body));
            break;
          default:
            break;
        }
      }
      for (const target of corked) target.uncork();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(helloTimer);
      this.#connections.delete(connection.id);
      this.table.leave(connection.id, performance.now());
    });
  }

  #hello(connection: Connection, type: number, body: Buffer): void {
    if (type !== FrameType.ClientHello) {
      this.#reject(connection, 'bad-hello', 'the first frame must be a hello');
      return;
    }
    let hello: ClientHello;
    try {
      hello = JSON.parse(body.toString('utf8')) as ClientHello;
    } catch {
      this.#reject(connection, 'bad-hello', 'the hello is not JSON');
      return;
    }
    if (hello.v !== PROTOCOL_VERSION || typeof hello.token !== 'string') {
      this.#reject(connection, 'bad-hello', `unsupported hello (version ${String(hello.v)})`);
      return;
    }
    let claims;
    try {
      claims = verifyAdmissionToken(hello.token, this.options.verifyKeys, (this.options.now ?? Date.now)());
    } catch (error) {
      if (!(error instanceof AdmissionError)) throw error;
      this.#reject(connection, 'admission-rejected', `${error.reason}: ${error.message}`);
      return;
    }
    connection.key = keyBytes(claims.publicKey);
    const { replaced } = this.table.join(
      connection.id,
      claims.jobId,
      connection.key.toString('hex'),
      claims.rateBytesPerSec,
      performance.now(),
    );
    if (replaced !== null) {
      const old = this.#connections.get(replaced);
      old?.socket.end(
        encodeJsonFrame(FrameType.Error, {
          code: 'replaced',
          message: 'a newer connection of this key took over',
        }),
      );
      old?.socket.destroy();
    }
    const reply: ServerHello = {
      v: PROTOCOL_VERSION,
      relayId: this.options.relayId,
      observed: `${connection.socket.remoteAddress ?? '?'}:${connection.socket.remotePort ?? 0}`,
      jobId: claims.jobId,
      rateBytesPerSec: Math.min(
        ...[this.options.limits.jobRateBytesPerSec, claims.rateBytesPerSec ?? 0].filter((r) => r > 0),
        Number.MAX_SAFE_INTEGER,
      ),
    };
    connection.socket.write(encodeJsonFrame(FrameType.ServerHello, reply));
  }

  #forward(connection: Connection, raw: Buffer, body: Buffer, corked: Set<Socket>): void {
    const bytes = body.length - KEY_BYTES;
    const route = this.table.route(
      connection.id,
      body.toString('hex', 0, KEY_BYTES),
      bytes,
      performance.now(),
    );
    if (route.kind === 'drop') return;
    const target = this.#connections.get(route.to);
    if (!target || target.socket.writableLength > (this.options.maxQueuedBytes ?? 4 * 1024 * 1024)) {
      this.table.droppedAfterRouting(connection.id, bytes);
      return;
    }
    // SendPacket and RecvPacket have the same layout: swap the type and the key, send the same bytes.
    raw[0] = FrameType.RecvPacket;
    connection.key!.copy(raw, 5);
    if (!corked.has(target.socket)) {
      target.socket.cork();
      corked.add(target.socket);
    }
    target.socket.write(raw);
  }

  #reject(connection: Connection, reason: RejectReason, message: string): void {
    this.rejected[reason]++;
    this.options.log?.('warn', 'connection refused', {
      reason,
      message,
      from: connection.socket.remoteAddress,
    });
    connection.socket.end(encodeJsonFrame(FrameType.Error, { code: reason, message }));
    setTimeout(() => connection.socket.destroy(), 1_000).unref();
  }
}
