import { fromSeed, type KeyPair } from '@nats-io/nkeys';
import { createPrivateKey, createPublicKey } from 'node:crypto';

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
    // A one-letter name gets a key that starts `UA` + the letter (a user key's second character
    // is one of A–D): edges sort as their names.
    const wanted = /^[A-Z]$/.test(name) ? `UA${name}` : 'U';
    let salt = 0;
    while (!publicKeyOf(seedOf(name, salt)).startsWith(wanted)) salt++;
    key = fromSeed(new TextEncoder().encode(encode([0x95, 0x00], seedOf(name, salt))));
    keys.set(name, key);
    names.set(key.getPublicKey(), name);
  }
  return key;
};

const seedOf = (name: string, salt: number): Uint8Array => {
  const raw = new Uint8Array(32);
  for (let i = 0; i < 32; i++) raw[i] = (name.charCodeAt(i % name.length) * 31 + i * 7) & 0xff;
  raw[0] = salt & 0xff;
  raw[1] = (salt >>> 8) & 0xff;
  return raw;
};

/** An nkey's text: its prefix bytes, the payload, the checksum (little endian), in base32. */
const encode = (prefix: readonly number[], payload: Uint8Array): string => {
  const body = Uint8Array.from([...prefix, ...payload]);
  const crc = crc16(body);
  return base32(Uint8Array.from([...body, crc & 0xff, crc >>> 8]));
};

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The user public key (`U…`) of a raw ed25519 seed, by Node's crypto (fast enough to search). */
const publicKeyOf = (seed: Uint8Array): string => {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return encode([0xa0], spki.subarray(12));
};

const publicKeys = new Map<string, string>();

/** The public key of `edgeKey(name)`, cached (nkeys derives it anew on every call). */
export const edgePublicKey = (name: string): string => {
  let id = publicKeys.get(name);
  if (id === undefined) {
    id = edgeKey(name).getPublicKey();
    publicKeys.set(name, id);
  }
  return id;
};

/**
 * A short readable tag of a test edge for names derived from it (GPU UUIDs, reservation ids):
 * its name repeated to `length` characters (`tagOf(edgeId('A'), 4)` is `AAAA`).
 */
export const tagOf = (publicKey: string, length: number): string => {
  const name = names.get(publicKey);
  return name === undefined ? publicKey.slice(1, 1 + length) : name.repeat(length).slice(0, length);
};

/** The key of a test edge by its id (`edgeId(name)`). */
export const edgeKeyOf = (publicKey: string): KeyPair => {
  const name = names.get(publicKey);
  if (name === undefined) throw new Error(`no test edge has the id ${publicKey}`);
  return edgeKey(name);
};
