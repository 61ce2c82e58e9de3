import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

/*
 * WireGuard keys: X25519, 32 bytes, exchanged in standard base64 (as `wg` prints them) and written
 * to the UAPI socket in hex. Generated on the edge with node:crypto; the private key never leaves it.
 */

export interface KeyPair {
  /** base64, 44 characters. Stays on the edge. */
  readonly privateKey: string;
  /** base64, 44 characters. */
  readonly publicKey: string;
}

export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
  readonly code = 'INVALID_KEY' as const;
}

// DER prefixes of an X25519 key in PKCS#8 (private) and SPKI (public) form, followed by the 32 raw bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

/** The 32 bytes of a base64 key. */
export const keyBytes = (key: string): Buffer => {
  const bytes = Buffer.from(key, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== key)
    throw new InvalidKeyError('not a 32-byte base64 key');
  return bytes;
};

export const keyToHex = (key: string): string => keyBytes(key).toString('hex');
export const keyFromHex = (hex: string): string => {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new InvalidKeyError('not a 64-digit hex key');
  return Buffer.from(hex, 'hex').toString('base64');
};

const privateKeyObject = (privateKey: string): KeyObject =>
  createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, keyBytes(privateKey)]),
    format: 'der',
    type: 'pkcs8',
  });
const publicKeyObject = (publicKey: string): KeyObject =>
  createPublicKey({ key: Buffer.concat([SPKI_PREFIX, keyBytes(publicKey)]), format: 'der', type: 'spki' });

/** The public key of a private key. */
export const publicKeyOf = (privateKey: string): string => {
  const der = createPublicKey(privateKeyObject(privateKey)).export({ format: 'der', type: 'spki' });
  return der.subarray(SPKI_PREFIX.length).toString('base64');
};

/** A fresh key pair; the private key is clamped as `wg genkey` does (X25519 would clamp it anyway). */
export const generateKeyPair = (): KeyPair => {
  const secret = randomBytes(32);
  secret[0]! &= 248;
  secret[31]! &= 127;
  secret[31]! |= 64;
  const privateKey = secret.toString('base64');
  return { privateKey, publicKey: publicKeyOf(privateKey) };
};

/** The X25519 shared secret of our private key and a peer's public key (the same on both ends). */
export const sharedSecret = (privateKey: string, peerPublicKey: string): Buffer =>
  diffieHellman({ privateKey: privateKeyObject(privateKey), publicKey: publicKeyObject(peerPublicKey) });

/** The key that authenticates disco probes between two edges (derived from their static keys). */
export const discoKey = (privateKey: string, peerPublicKey: string): Buffer =>
  createHmac('sha256', sharedSecret(privateKey, peerPublicKey)).update('gpunet-disco-v1').digest();

/**
 * The WireGuard interface name of a (job, host): `gpn` + 10 hex digits of a hash of the job id and
 * the host's public key. Interface names must be unique per machine (wireguard-go's control socket is
 * named after them in a directory every namespace shares) and at most 15 characters.
 */
export const interfaceName = (jobId: string, publicKey: string): string =>
  `gpn${createHash('sha256').update(`${jobId}\u0000${publicKey}`).digest('hex').slice(0, 10)}`;
