import { randomBytes } from 'node:crypto';

/** The longest namespace `testNamespace` returns; leaves room for suffixes in a 63-byte Postgres name. */
export const MAX_NAMESPACE_LENGTH = 40;
const RANDOM_CHARS = 10;
// `t_` + label + `_` + random.
const MAX_LABEL_LENGTH = MAX_NAMESPACE_LENGTH - 2 - 1 - RANDOM_CHARS;

/**
 * A name no other suite (in this run, a parallel run or an earlier crashed one) uses:
 * `t_<label>_<10 random chars>`, at most 40 characters of `a-z 0-9 _`, starting with a letter.
 * One value serves every kind of isolation at once: it is a valid NATS subject token, a JetStream
 * stream-name prefix and an unquoted Postgres schema name.
 *
 * @param label what the suite tests, for people reading leftovers; lowercased, other characters
 *   become `_`, cut to 27 characters.
 */
export const testNamespace = (label: string): string => {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_LABEL_LENGTH)
    .replace(/_+$/, '');
  return clean === '' ? `t_${randomToken()}` : `t_${clean}_${randomToken()}`;
};

/** 10 characters of `a-z 0-9` from the OS's CSPRNG (≈ 51 bits): collisions are not a practical concern. */
const randomToken = (): string => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(RANDOM_CHARS);
  let out = '';
  // 256 % 36 ≠ 0 biases a few characters slightly; irrelevant for uniqueness.
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
};
