import { stdSerializers } from 'pino';

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are secrets, compared after lower-casing and dropping `-`, `_` and `.`:
 * `password`, `DATABASE_PASSWORD`, `apiKey`, `api_key`, `x-api-key`, `authorization`,
 * `natsToken`, `accessToken`, `clientSecret`, `privateKey`, `signingPrivateKey`, `seed`,
 * `nkeySeed`, `cookie`, `credentials`. A key that merely contains such a word is redacted too:
 * over-redacting a log line costs less than leaking a credential.
 */
const SECRET_KEY =
  /pass(word|wd|phrase)|secret|token|apikey|authori[sz]ation|privatekey|seed$|cookie|credential/;

/** `scheme://user:password@host` — keeps scheme, user and host, drops the password. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*):([^\s@/]+)@/gi;
/** libpq-style `password=…` inside a connection string. */
const KV_PASSWORD = /\b(password|pwd)=([^\s;&]+)/gi;
/** `Authorization` header values that slipped into a string. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
/** NATS nkey seeds (user, account, operator, server, cluster, curve): `S` + type + 56 base32 chars. */
const NKEY_SEED = /\bS[UAONCX][A-Z2-7]{56}\b/g;

const MAX_DEPTH = 12;

const isSecretKey = (key: string): boolean => SECRET_KEY.test(key.toLowerCase().replace(/[-_.]/g, ''));

/** Removes credentials from free text: URL passwords, `password=` pairs, bearer tokens, nkey seeds. */
export function redactString(text: string): string {
  return text
    .replace(URL_PASSWORD, `$1:${REDACTED}@`)
    .replace(KV_PASSWORD, `$1=${REDACTED}`)
    .replace(AUTH_SCHEME, `$1 ${REDACTED}`)
    .replace(NKEY_SEED, REDACTED);
}

/**
 * A copy of `value` that is safe to log: values under secret-looking keys are replaced by
 * {@link REDACTED} at any depth, and every string is passed through {@link redactString}. Errors
 * are serialized first (message, stack and own fields are redacted too). Cycles become
 * `[Circular]`. The input is never modified.
 */
export function redact(value: unknown): unknown {
  return walk(value, 0, new WeakSet());
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  if (value instanceof Error) return walk(stdSerializers.err(value), depth, seen);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return walk(toJSON.call(value), depth, seen);
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1, seen));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = item != null && isSecretKey(key) ? REDACTED : walk(item, depth + 1, seen);
    }
    return out;
  } finally {
    // Shared (not circular) references are fine: only the current path counts as a cycle.
    seen.delete(value);
  }
}
