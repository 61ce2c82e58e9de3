/*
 * The relay protocol (modelled on Tailscale's DERP): over one TCP (or TLS) connection, frames of
 * `type (1 byte) | body length (4 bytes, big endian) | body`. Packet frames carry a 32-byte
 * WireGuard public key — the destination when an edge sends, the source when the relay delivers —
 * then the packet, which is WireGuard ciphertext or a disco probe: the relay never sees plaintext.
 */

export const FrameType = {
  /** edge → relay, first frame: JSON `{ v: 1, token }` (the admission token names job and key). */
  ClientHello: 0x01,
  /** relay → edge, answer to the hello: JSON `ServerHello`. */
  ServerHello: 0x02,
  /** edge → relay: destination key (32) | packet. */
  SendPacket: 0x03,
  /** relay → edge: source key (32) | packet. Same layout as `SendPacket`, so the relay rewrites in place. */
  RecvPacket: 0x04,
  /** Either way: 8 opaque bytes, answered by a `Pong` with the same bytes. */
  Ping: 0x05,
  Pong: 0x06,
  /** relay → edge before it closes: JSON `{ code, message }`. */
  Error: 0x07,
} as const;
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

export const FRAME_HEADER_BYTES = 5;
export const KEY_BYTES = 32;
/** Largest packet a frame carries (a UDP datagram). */
export const MAX_PACKET_BYTES = 65_535;
/** Largest frame body accepted: a packet with its key, or a control message. */
export const MAX_FRAME_BODY_BYTES = KEY_BYTES + MAX_PACKET_BYTES;
export const PROTOCOL_VERSION = 1;

export interface ClientHello {
  readonly v: number;
  readonly token: string;
}

export interface ServerHello {
  readonly v: number;
  readonly relayId: string;
  /** The TCP source address the relay saw (for diagnostics). */
  readonly observed: string;
  readonly jobId: string;
  /** The job's relay budget in bytes per second (0: unlimited). */
  readonly rateBytesPerSec: number;
}

export interface RelayErrorBody {
  readonly code: string;
  readonly message: string;
}

export interface Frame {
  readonly type: number;
  /** The frame's body (a view into `raw`). */
  readonly body: Buffer;
  /** The whole frame, header included (a view into the received bytes; the relay rewrites it in place). */
  readonly raw: Buffer;
}

export class FrameTooLargeError extends Error {
  override readonly name = 'FrameTooLargeError';
  readonly code = 'FRAME_TOO_LARGE' as const;
}

/** A frame with a body. */
export const encodeFrame = (type: number, body: Buffer | string = Buffer.alloc(0)): Buffer => {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (bytes.length > MAX_FRAME_BODY_BYTES)
    throw new FrameTooLargeError(`frame body of ${bytes.length} bytes`);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + bytes.length);
  frame[0] = type;
  frame.writeUInt32BE(bytes.length, 1);
  bytes.copy(frame, FRAME_HEADER_BYTES);
  return frame;
};

export const encodeJsonFrame = (type: number, value: unknown): Buffer =>
  encodeFrame(type, JSON.stringify(value));

/** A `SendPacket` (or `RecvPacket`) frame in one allocation. */
export const encodePacketFrame = (type: number, key: Buffer, packet: Buffer): Buffer => {
  if (key.length !== KEY_BYTES) throw new Error(`key of ${key.length} bytes`);
  if (packet.length > MAX_PACKET_BYTES) throw new FrameTooLargeError(`packet of ${packet.length} bytes`);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + KEY_BYTES + packet.length);
  frame[0] = type;
  frame.writeUInt32BE(KEY_BYTES + packet.length, 1);
  key.copy(frame, FRAME_HEADER_BYTES);
  packet.copy(frame, FRAME_HEADER_BYTES + KEY_BYTES);
  return frame;
};

/** The key of a packet frame's body. */
export const packetKey = (body: Buffer): Buffer => body.subarray(0, KEY_BYTES);
/** The packet of a packet frame's body. */
export const packetPayload = (body: Buffer): Buffer => body.subarray(KEY_BYTES);

/**
 * Splits a byte stream into frames. Frames inside one chunk are views into it (no copy); only a frame
 * split across chunks is copied once.
 */
export class FrameDecoder {
  #pending: Buffer | undefined;

  constructor(private readonly maxBody = MAX_FRAME_BODY_BYTES) {}

  /** Bytes held back, waiting for the rest of a frame. */
  get buffered(): number {
    return this.#pending?.length ?? 0;
  }

  /** Feeds a chunk; returns the frames it completes. Throws `FrameTooLargeError` on an oversized header. */
  push(chunk: Buffer): Frame[] {
    const data = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#pending = undefined;
    const frames: Frame[] = [];
    let offset = 0;
    while (data.length - offset >= FRAME_HEADER_BYTES) {
      const length = data.readUInt32BE(offset + 1);
      if (length > this.maxBody)
        throw new FrameTooLargeError(`frame of ${length} bytes (max ${this.maxBody})`);
      const end = offset + FRAME_HEADER_BYTES + length;
      if (end > data.length) break;
      const raw = data.subarray(offset, end);
      frames.push({ type: raw[0]!, body: raw.subarray(FRAME_HEADER_BYTES), raw });
      offset = end;
    }
    if (offset < data.length) this.#pending = Buffer.from(data.subarray(offset));
    return frames;
  }
}
