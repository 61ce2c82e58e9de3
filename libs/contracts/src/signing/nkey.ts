const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const base32Decode = (text: string): Uint8Array => {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of text) {
    const digit = BASE32.indexOf(c);
    if (digit < 0) throw new TypeError(`not base32: ${c}`);
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
};

/**
 * The raw 32-byte ed25519 key inside a user nkey (`U…`: prefix byte, key, CRC-16). The checksum is
 * not checked here (`fromPublic` of `@nats-io/nkeys` does); this is for handing the key to a fast
 * ed25519 implementation (Node's crypto verifies ~250× faster than the nkeys library's JS).
 */
export const nkeyRawPublicKey = (publicKey: string): Uint8Array => base32Decode(publicKey).slice(1, 33);

/** The raw 32-byte ed25519 seed inside an nkey seed (`SU…`: two prefix bytes, seed, CRC-16). */
export const nkeyRawSeed = (seed: string): Uint8Array => base32Decode(seed.trim()).slice(2, 34);
