import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Disco probes between two edges (the name is Tailscale's): pings that prove a path works both ways
 * and measure its RTT, and a bounded burst that measures its throughput. They travel over the UDP
 * port WireGuard will use (direct paths) or inside relay packet frames (relayed paths), and are
 * authenticated with HMAC-SHA256 (truncated to 16 bytes) under a key only the two edges can derive
 * (`discoKey`: their X25519 static-static secret). They never look like WireGuard messages, whose
 * first byte is 1 to 4.
 *
 *   'GPND' | version (1) | type (1) | sender public key (32) | body | mac (16)
 */

const MAGIC = Buffer.from('GPND');
const VERSION = 1;
const HEAD = MAGIC.length + 2 + 32;
const MAC_BYTES = 16;

export const DiscoType = { Ping: 1, Pong: 2, Bulk: 3, BulkEnd: 4, BulkReport: 5 } as const;

export type DiscoMessage =
  | {
      type: 'ping';
      txid: Buffer;
      /** The sender already confirmed a direct path to the receiver. */ confirmed: boolean;
    }
  | {
      type: 'pong';
      txid: Buffer;
      /** Where the pinger's packet came from, as the ponger saw it. */ observed: string;
    }
  | { type: 'bulk'; probeId: number; seq: number; padding: number }
  | { type: 'bulk-end'; probeId: number; packets: number; bytes: number }
  | { type: 'bulk-report'; probeId: number; packets: number; bytes: number; spanMicros: number };

/** Whether a datagram or relayed packet is a disco message (cheap check, before authentication). */
export const isDisco = (packet: Buffer): boolean =>
  packet.length >= HEAD + MAC_BYTES && packet.subarray(0, 4).equals(MAGIC) && packet[4] === VERSION;

/** The claimed sender of a disco message (unauthenticated until `openDisco` succeeds). */
export const discoSender = (packet: Buffer): Buffer => packet.subarray(6, 6 + 32);

const body = (message: DiscoMessage): Buffer => {
  switch (message.type) {
    case 'ping':
      return Buffer.concat([message.txid, Buffer.from([message.confirmed ? 1 : 0])]);
    case 'pong': {
      const [address, port] = message.observed.split(':');
      const b = Buffer.alloc(12 + 6);
      message.txid.copy(b, 0);
      (address ?? '0.0.0.0').split('.').forEach((o, i) => b.writeUInt8(Number(o), 12 + i));
      b.writeUInt16BE(Number(port ?? 0), 16);
      return b;
    }
    case 'bulk': {
      const b = Buffer.alloc(8 + message.padding);
      b.writeUInt32BE(message.probeId, 0);
      b.writeUInt32BE(message.seq, 4);
      return b;
    }
    case 'bulk-end': {
      const b = Buffer.alloc(12);
      b.writeUInt32BE(message.probeId, 0);
      b.writeUInt32BE(message.packets, 4);
      b.writeUInt32BE(message.bytes, 8);
      return b;
    }
    case 'bulk-report': {
      const b = Buffer.alloc(16);
      b.writeUInt32BE(message.probeId, 0);
      b.writeUInt32BE(message.packets, 4);
      b.writeUInt32BE(message.bytes, 8);
      b.writeUInt32BE(Math.min(message.spanMicros, 0xffffffff), 12);
      return b;
    }
  }
};

const TYPE_CODES = { ping: 1, pong: 2, bulk: 3, 'bulk-end': 4, 'bulk-report': 5 } as const;

const mac = (key: Buffer, data: Buffer): Buffer =>
  createHmac('sha256', key).update(data).digest().subarray(0, MAC_BYTES);

/** Encodes and authenticates a disco message from `senderKey` (32 bytes) under the pair's `key`. */
export const sealDisco = (message: DiscoMessage, senderKey: Buffer, key: Buffer): Buffer => {
  const unsigned = Buffer.concat([
    MAGIC,
    Buffer.from([VERSION, TYPE_CODES[message.type]]),
    senderKey,
    body(message),
  ]);
  return Buffer.concat([unsigned, mac(key, unsigned)]);
};

/** Verifies and decodes a disco message; null when it is malformed or not authentic. */
export const openDisco = (packet: Buffer, key: Buffer): DiscoMessage | null => {
  if (!isDisco(packet)) return null;
  const unsigned = packet.subarray(0, packet.length - MAC_BYTES);
  if (!timingSafeEqual(mac(key, unsigned), packet.subarray(packet.length - MAC_BYTES))) return null;
  const b = unsigned.subarray(HEAD);
  switch (packet[5] ?? 0) {
    case DiscoType.Ping:
      return b.length === 13
        ? { type: 'ping', txid: Buffer.from(b.subarray(0, 12)), confirmed: b[12] === 1 }
        : null;
    case DiscoType.Pong:
      return b.length === 18
        ? {
            type: 'pong',
            txid: Buffer.from(b.subarray(0, 12)),
            observed: `${[...b.subarray(12, 16)].join('.')}:${b.readUInt16BE(16)}`,
          }
        : null;
    case DiscoType.Bulk:
      return b.length >= 8
        ? { type: 'bulk', probeId: b.readUInt32BE(0), seq: b.readUInt32BE(4), padding: b.length - 8 }
        : null;
    case DiscoType.BulkEnd:
      return b.length === 12
        ? {
            type: 'bulk-end',
            probeId: b.readUInt32BE(0),
            packets: b.readUInt32BE(4),
            bytes: b.readUInt32BE(8),
          }
        : null;
    case DiscoType.BulkReport:
      return b.length === 16
        ? {
            type: 'bulk-report',
            probeId: b.readUInt32BE(0),
            packets: b.readUInt32BE(4),
            bytes: b.readUInt32BE(8),
            spanMicros: b.readUInt32BE(12),
          }
        : null;
    default:
      return null;
  }
};
