import { nkeyRawSeed } from '@gpunet/contracts';
import { createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The seed file in the edge's directory. */
export const SEED_FILE = 'edge.nk';

/** The seed file is missing, malformed, or readable by others. */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  constructor(
    readonly code: 'IDENTITY_MISSING' | 'IDENTITY_UNSAFE' | 'IDENTITY_INVALID' | 'IDENTITY_EXISTS',
    message: string,
  ) {
    super(message);
  }
}

/** The edge's ed25519 identity: a NATS user nkey. Its public key is the edge id. */
export interface EdgeIdentity {
  readonly edgeId: string;
  readonly seed: Uint8Array;
  sign(text: string): string;
}

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

// Signs with Node's ed25519 (the nkeys library's JS signs a report in ~20 ms; Node in ~0.05 ms).
const identityOf = (kp: KeyPair): EdgeIdentity => {
  const seed = kp.getSeed();
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519, nkeyRawSeed(new TextDecoder().decode(seed))]),
    format: 'der',
    type: 'pkcs8',
  });
  return {
    edgeId: kp.getPublicKey(),
    seed,
    sign: (text) => cryptoSign(null, Buffer.from(text, 'utf8'), key).toString('base64url'),
  };
};

/**
 * Creates the identity on first start: the directory `0700`, the seed file `0600`, written with
 * `O_EXCL` so an existing key is never overwritten.
 */
export const createIdentity = async (dir: string): Promise<EdgeIdentity> => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const kp = createUser();
  let file;
  try {
    file = await open(join(dir, SEED_FILE), 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new IdentityError(
        'IDENTITY_EXISTS',
        `${join(dir, SEED_FILE)} exists; the edge keeps its identity`,
      );
    throw e;
  }
  try {
    await file.writeFile(`${new TextDecoder().decode(kp.getSeed())}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  return identityOf(kp);
};

/** Loads the identity; refuses a seed file that group or others can read (like ssh does). */
export const loadIdentity = async (dir: string): Promise<EdgeIdentity> => {
  const path = join(dir, SEED_FILE);
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch {
    throw new IdentityError(
      'IDENTITY_MISSING',
      `no edge identity at ${path}: run \`gpunet edge init\` first`,
    );
  }
  if ((mode & 0o077) !== 0)
    throw new IdentityError(
      'IDENTITY_UNSAFE',
      `${path} is readable by others (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${path}`,
    );
  const text = (await readFile(path, 'utf8')).trim();
  try {
    const kp = fromSeed(new TextEncoder().encode(text));
    if (!kp.getPublicKey().startsWith('U')) throw new Error('not a user key');
    return identityOf(kp);
  } catch (e) {
    throw new IdentityError(
      'IDENTITY_INVALID',
      `${path} holds no user nkey seed: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
};

/** Loads the identity, creating it when there is none. */
export const loadOrCreateIdentity = async (
  dir: string,
): Promise<{ identity: EdgeIdentity; created: boolean }> => {
  try {
    return { identity: await loadIdentity(dir), created: false };
  } catch (e) {
    if (e instanceof IdentityError && e.code === 'IDENTITY_MISSING')
      return { identity: await createIdentity(dir), created: true };
    throw e;
  }
};
