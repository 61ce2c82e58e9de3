import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';

/*
 * The wire format of link probes — deliberately tiny, so that a responder cannot be turned into an
 * amplifier or a traffic sink for strangers:
 *
 * - RTT: a UDP datagram of exactly 24 bytes, `GPNP` | u32 version (1) | u64 sequence | u64 sender
 *   time; the responder sends the same 24 bytes back. Anything else is dropped.
 * - Throughput: a TCP connection that starts with 16 bytes, `GPNT` | u32 version (1) | u64 byte budget;
 *   then the prober streams at most that many bytes. Every `reportEveryMs` the responder writes one
 *   JSON line `{"bytes":…,"elapsedUs":…}` (bytes received and time since the first payload byte), and
 *   a last one when the prober ends. A budget above `maxBytes` is refused at once.
 */
export const PROBE_MAGIC_RTT = 'GPNP';
export const PROBE_MAGIC_TCP = 'GPNT';
export const PROBE_VERSION = 1;
export const RTT_DATAGRAM_BYTES = 24;
export const TCP_HEADER_BYTES = 16;

export interface ProbeResponderOptions {
  /** Address to bind. Default `0.0.0.0`. */
  readonly address?: string;
  /** UDP echo port; 0 picks a free one. */
  readonly udpPort: number;
  /** TCP sink port; 0 picks a free one. */
  readonly tcpPort: number;
  /** Largest byte budget a prober may announce. Default 256 MiB (the contract's bound). */
  readonly maxBytes?: number;
  /** Concurrent throughput connections; more are closed at once. Default 2. */
  readonly maxConnections?: number;
  /** A connection silent this long is closed. Default 10 000 ms. */
  readonly idleTimeoutMs?: number;
  /** Progress line period. Default 100 ms. */
  readonly reportEveryMs?: number;
  /** Monotonic clock in µs (tests); default `process.hrtime`. */
  readonly nowUs?: () => number;
}

export const hrtimeUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** A running responder: where it listens, and how to stop it. */
export interface ProbeResponder {
  readonly udpPort: number;
  readonly tcpPort: number;
  close(): Promise<void>;
}

/**
 * Answers other edges' link probes: echoes RTT datagrams and sinks bounded throughput transfers,
 * reporting what arrived. An edge runs one on its probe ports (benchmarking's configuration), so
 * that peers asked by `cmd.edge.{id}.probe-links.v1` can measure the path to it.
 */
export const startProbeResponder = async (options: ProbeResponderOptions): Promise<ProbeResponder> => {
  const address = options.address ?? '0.0.0.0';
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const maxConnections = options.maxConnections ?? 2;
  const reportEveryMs = options.reportEveryMs ?? 100;
  const nowUs = options.nowUs ?? hrtimeUs;

  const udp: UdpSocket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
  udp.on('message', (msg, rinfo) => {
    if (msg.length !== RTT_DATAGRAM_BYTES || msg.toString('latin1', 0, 4) !== PROBE_MAGIC_RTT) return;
    if (msg.readUInt32BE(4) !== PROBE_VERSION) return;
    udp.send(msg, rinfo.port, rinfo.address);
  });
  udp.on('error', () => undefined);
  await new Promise<void>((res, rej) => {
    udp.once('error', rej);
    udp.bind(options.udpPort, address, () => {
      udp.off('error', rej);
      res();
    });
  });

  const sockets = new Set<Socket>();
  const tcp: Server = createServer((socket) => {
    if (sockets.size >= maxConnections) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(options.idleTimeoutMs ?? 10_000, () => socket.destroy());
    let header = Buffer.alloc(0);
    let budget = -1;
    let received = 0;
    let firstUs = 0;
    let lastUs = 0;
    let timer: NodeJS.Timeout | undefined;
    const report = () => {
      if (!socket.writable) return;
      socket.write(
        `${JSON.stringify({ bytes: received, elapsedUs: received === 0 ? 0 : lastUs - firstUs })}\n`,
      );
    };
    const finish = () => {
      clearInterval(timer);
      report();
      socket.end();
    };
    socket.on('data', (chunk: Buffer) => {
      let data = chunk;
      if (budget < 0) {
        header = Buffer.concat([header, data]);
        if (header.length < TCP_HEADER_BYTES) return;
        if (header.toString('latin1', 0, 4) !== PROBE_MAGIC_TCP || header.readUInt32BE(4) !== PROBE_VERSION) {
          socket.destroy();
          return;
        }
        budget = Number(header.readBigUInt64BE(8));
        if (budget > maxBytes) {
          socket.destroy();
          return;
        }
        data = header.subarray(TCP_HEADER_BYTES);
        timer = setInterval(report, reportEveryMs);
      }
      if (data.length === 0) return;
      const t = nowUs();
      if (received === 0) firstUs = t;
      received += data.length;
      lastUs = t;
      if (received > budget) socket.destroy();
      else if (received === budget) finish();
    });
    socket.on('end', () => {
      if (budget >= 0 && received < budget) finish();
      else if (budget < 0) socket.end();
    });
    socket.on('close', () => {
      clearInterval(timer);
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((res, rej) => {
    tcp.once('error', rej);
    tcp.listen(options.tcpPort, address, () => {
      tcp.off('error', rej);
      res();
    });
  });

  const udpPort = udp.address().port;
  const tcpAddress = tcp.address();
  const tcpPort = typeof tcpAddress === 'object' && tcpAddress !== null ? tcpAddress.port : options.tcpPort;
  return {
    udpPort,
    tcpPort,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((res) => udp.close(() => res())),
        new Promise<void>((res) => tcp.close(() => res())),
      ]);
    },
  };
};
