import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';

/*
 * Admission tokens: the control plane signs (ed25519) "this WireGuard key is a member of this job
 * until then"; relays trust only the verification keys they are configured with. Relays therefore
 * keep no membership database and need no connection to the control plane; jobs stay isolated on a
 * relay because a frame is forwarded only between keys admitted to the same job.
 *
 *   gpa1.<base64url(JSON claims)>.<base64url(signature over "gpa1.<claims>")>
 */

export interface AdmissionClaims {
  readonly jobId: string;
  /** WireGuard public key (base64) of the (job, host). */
  readonly publicKey: string;
  /** Expiry, ms since the epoch. The relay checks it when the edge connects. */
  readonly exp: number;
  /** The job's relay budget in bytes per second; the relay applies the smaller of this and its own. */
  readonly rateBytesPerSec?: number;
}

export type AdmissionRejection = 'malformed' | 'bad-signature' | 'expired';

export class AdmissionError extends Error {
  override readonly name = 'AdmissionError';
  readonly code = 'ADMISSION_REJECTED' as const;
  constructor(
    readonly reason: AdmissionRejection,
    message: string,
  ) {
    super(message);
  }
}

const PREFIX = 'gpa1';
// DER prefixes of raw ed25519 keys (PKCS#8 private, SPKI public), followed by the 32 raw bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** An ed25519 key pair for signing tokens, both halves as 32 raw bytes in base64. */
export const generateAdmissionKeys = (): { signingKey: string; verifyKey: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signingKey: privateKey
      .export({ format: 'der', type: 'pkcs8' })
      .subarray(PKCS8_PREFIX.length)
      .toString('base64'),
    verifyKey: publicKey
      .export({ format: 'der', type: 'spki' })
      .subarray(SPKI_PREFIX.length)
      .toString('base64'),
  };
};

const signingKeyObject = (key: string): KeyObject =>
  createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(key, 'base64')]),
    format: 'der',
    type: 'pkcs8',
  });
const verifyKeyObject = (key: string): KeyObject =>
  createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(key, 'base64')]),
    format: 'der',
    type: 'spki',
  });

/** Signs a token (control plane). `signingKey`: 32 raw bytes in base64. */
export const issueAdmissionToken = (claims: AdmissionClaims, signingKey: string): string => {
  const body = `${PREFIX}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${sign(null, Buffer.from(body), signingKeyObject(signingKey)).toString('base64url')}`;
};

/**
 * Verifies a token against any of `verifyKeys` (several, so the control plane can rotate its key) and
 * returns its claims; throws `AdmissionError` with the reason.
 */
export const verifyAdmissionToken = (
  token: string,
  verifyKeys: readonly string[],
  nowMs: number,
): AdmissionClaims => {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX)
    throw new AdmissionError('malformed', 'not an admission token');
  const body = `${parts[0]}.${parts[1]}`;
  const signature = Buffer.from(parts[2]!, 'base64url');
  if (!verifyKeys.some((key) => verify(null, Buffer.from(body), verifyKeyObject(key), signature)))
    throw new AdmissionError('bad-signature', 'the token is not signed by a trusted key');
  let claims: AdmissionClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as AdmissionClaims;
  } catch {
    throw new AdmissionError('malformed', 'the claims are not JSON');
  }
  if (
    typeof claims.jobId !== 'string' ||
    typeof claims.publicKey !== 'string' ||
    Buffer.from(claims.publicKey, 'base64').length !== 32 ||
    typeof claims.exp !== 'number' ||
    (claims.rateBytesPerSec !== undefined && !(claims.rateBytesPerSec >= 0))
  )
    throw new AdmissionError('malformed', 'the claims are incomplete');
  if (claims.exp <= nowMs)
    throw new AdmissionError('expired', `the token expired at ${new Date(claims.exp).toISOString()}`);
  return claims;
};
