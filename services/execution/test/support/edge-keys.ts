import { fromSeed, type KeyPair } from '@nats-io/nkeys';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const base32 = (bytes: Uint8Array): string => {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};

/** CRC-16/XMODEM, as nkeys checksums its keys. */
const crc16 = (bytes: Uint8Array): number => {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
};

const keys = new Map<string, KeyPair>();
const names = new Map<string, string>();

/**
 * A user nkey for a test edge, derived from `name` (the same name gives the same key in every run),
 * so statuses a test edge publishes carry a real signature.
 */
export const edgeKey = (name: string): KeyPair => {
  let key = keys.get(name);
  if (!key) {
    const raw = new Uint8Array(32);
    for (let i = 0; i < 32; i++) raw[i] = (name.charCodeAt(i % name.length) * 31 + i * 7) & 0xff;
    // Seed prefix of a user key (`SU`), the raw seed, its checksum (little endian).
    const body = Uint8Array.from([0x95, 0x00, ...raw]);
    const crc = crc16(body);
    const seed = base32(Uint8Array.from([...body, crc & 0xff, crc >>> 8]));
    key = fromSeed(new TextEncoder().encode(seed));
    keys.set(name, key);
    names.set(key.getPublicKey(), name);
  }
  return key;
};

/**
 * A short readable tag of a test edge for names derived from it (GPU UUIDs, reservation ids):
 * its name repeated to `length` characters (`tagOf(edgeId('A'), 4)` is `AAAA`).
 */
export const tagOf = (publicKey: string, length: number): string => {
  const name = names.get(publicKey);
  return name === undefined ? publicKey.slice(1, 1 + length) : name.repeat(length).slice(0, length);
};
