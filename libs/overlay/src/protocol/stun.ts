/*
 * The part of STUN (RFC 5389) edges and relays need: a Binding request, and a success response
 * carrying XOR-MAPPED-ADDRESS — the source address and port the server saw, i.e. the edge's public
 * mapping. Interoperable with any STUN server; IPv4 only.
 */

const MAGIC_COOKIE = 0x2112a442;
const BINDING_REQUEST = 0x0001;
const BINDING_SUCCESS = 0x0101;
const XOR_MAPPED_ADDRESS = 0x0020;
const HEADER_BYTES = 20;

export interface StunMessage {
  readonly kind: 'request' | 'success';
  readonly transactionId: Buffer;
  /** For a success response: the mapped address. */
  readonly mapped?: { address: string; port: number };
}

export const encodeBindingRequest = (transactionId: Buffer): Buffer => {
  if (transactionId.length !== 12) throw new Error('a STUN transaction id has 12 bytes');
  const message = Buffer.alloc(HEADER_BYTES);
  message.writeUInt16BE(BINDING_REQUEST, 0);
  message.writeUInt16BE(0, 2);
  message.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(message, 8);
  return message;
};

export const encodeBindingSuccess = (transactionId: Buffer, address: string, port: number): Buffer => {
  const message = Buffer.alloc(HEADER_BYTES + 12);
  message.writeUInt16BE(BINDING_SUCCESS, 0);
  message.writeUInt16BE(12, 2);
  message.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(message, 8);
  message.writeUInt16BE(XOR_MAPPED_ADDRESS, 20);
  message.writeUInt16BE(8, 22);
  message.writeUInt8(0, 24);
  message.writeUInt8(0x01, 25);
  message.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), 26);
  const octets = address.split('.').map(Number);
  for (let i = 0; i < 4; i++) message.writeUInt8(octets[i]! ^ message[4 + i]!, 28 + i);
  return message;
};

/** Whether a datagram looks like STUN (type's top bits zero, magic cookie in place). */
export const isStun = (datagram: Buffer): boolean =>
  datagram.length >= HEADER_BYTES && (datagram[0]! & 0xc0) === 0 && datagram.readUInt32BE(4) === MAGIC_COOKIE;

/** A Binding request or success response; null for anything else (or malformed). */
export const decodeStun = (datagram: Buffer): StunMessage | null => {
  if (!isStun(datagram)) return null;
  const type = datagram.readUInt16BE(0);
  const length = datagram.readUInt16BE(2);
  if (HEADER_BYTES + length > datagram.length) return null;
  const transactionId = Buffer.from(datagram.subarray(8, 20));
  if (type === BINDING_REQUEST) return { kind: 'request', transactionId };
  if (type !== BINDING_SUCCESS) return null;
  let offset = HEADER_BYTES;
  while (offset + 4 <= HEADER_BYTES + length) {
    const attr = datagram.readUInt16BE(offset);
    const attrLength = datagram.readUInt16BE(offset + 2);
    if (attr === XOR_MAPPED_ADDRESS && attrLength >= 8 && datagram[offset + 5] === 0x01) {
      const port = datagram.readUInt16BE(offset + 6) ^ (MAGIC_COOKIE >>> 16);
      const octets = [0, 1, 2, 3].map((i) => datagram[offset + 8 + i]! ^ datagram[4 + i]!);
      return { kind: 'success', transactionId, mapped: { address: octets.join('.'), port } };
    }
    offset += 4 + Math.ceil(attrLength / 4) * 4;
  }
  return { kind: 'success', transactionId };
};
