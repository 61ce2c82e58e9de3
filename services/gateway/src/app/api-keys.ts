import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Tx } from '@gpunet/eventing';
import type { ApiKeyRow, ApiKeysRepository } from '../infra/api-keys.repository';

/*
 * API keys look like `gpn_<id>_<secret>`: the id (12 base62 characters) finds the row, the secret
 * (32 random bytes, base64url) proves possession. Only SHA-256 of the secret is stored: a key has
 * 256 bits of entropy, so a slow password hash would add latency to every request and no security.
 */

export const API_SCOPES = ['read', 'submit', 'admin'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export interface ApiPrincipal {
  readonly keyId: string;
  readonly tenantId: string;
  readonly scopes: readonly ApiScope[];
}

const KEY_PATTERN = /^gpn_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const parseApiKey = (key: string): { keyId: string; secret: string } | null => {
  const m = KEY_PATTERN.exec(key);
  return m ? { keyId: m[1]!, secret: m[2]! } : null;
};

// One-shot `hash`: a `createHash` object per request cost more than the digest itself.
export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

/** Whether `secret` hashes to `stored` (its SHA-256, hex or raw), in constant time. */
export const secretMatches = (secret: string, stored: string | Buffer): boolean => {
  const a = hash('sha256', secret, 'buffer');
  const b = typeof stored === 'string' ? Buffer.from(stored, 'hex') : stored;
  return a.length === b.length && timingSafeEqual(a, b);
};

export const generateApiKey = (): { key: string; keyId: string; secretHash: string } => {
  const idBytes = randomBytes(12);
  const keyId = [...idBytes].map((b) => BASE62[b % 62]).join('');
  const secret = randomBytes(32).toString('base64url');
  return { key: `gpn_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) };
};

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly tenantId: string;
  readonly scopes: readonly ApiScope[];
  readonly name: string | null;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

const toRecord = (r: ApiKeyRow): ApiKeyRecord => ({
  keyId: r.key_id,
  tenantId: r.tenant_id,
  scopes: r.scopes as ApiScope[],
  name: r.name,
  createdAt: r.created_at.toISOString(),
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export interface ApiKeyStoreOptions {
  /**
   * How long an authenticated key is trusted without reading its row again. A key revoked through
   * this process stops at once; through another gateway replica (or in the database), it keeps
   * working here for at most this long. 0 reads the row on every request. Default 5 000 ms.
   */
  readonly cacheTtlMs?: number;
  /** Keys kept at most; the least recently authenticated go first. Default 10 000. */
  readonly cacheMaxKeys?: number;
  /** Milliseconds now (tests pass a fake clock). Default `Date.now`. */
  readonly now?: () => number;
}

interface CachedKey {
  /** SHA-256 of the secret, raw. */
  readonly secretHash: Buffer;
  readonly principal: ApiPrincipal;
  readonly until: number;
}

/** API keys (authenticated through a bounded cache) and tenants' defaults. */
export class ApiKeyStore {
  /*
   * Authenticated keys by id: the key lookup was one of the two Postgres round trips of every read
   * (bench/gateway). Only successes are kept, with the stored hash, so a wrong secret for a cached
   * id is still refused; unknown keys always read the database (the rate limit bounds them).
   */
  readonly #cache = new Map<string, CachedKey>();
  /*
   * The read of a key id in flight, shared by every request that needs it meanwhile: when a busy
   * key's entry expires, hundreds of requests a second would otherwise each read its row at once
   * (bench/gateway: 70–230 key reads per run where ~15 expiries called for as many, each herd
   * taking pooled connections from the API's reads). Only reads the current entry started join it.
   */
  readonly #reading = new Map<string, Promise<ApiKeyRow | undefined>>();
  #reads = 0;
  /** Moves on when a key is revoked or replaced here: a read begun before must not fill the cache. */
  #changes = 0;
  readonly #ttlMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(
    private readonly keys: ApiKeysRepository,
    options: ApiKeyStoreOptions = {},
  ) {
    this.#ttlMs = options.cacheTtlMs ?? 5_000;
    this.#maxKeys = options.cacheMaxKeys ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** The principal a presented key stands for, or null (unknown, revoked, wrong secret, malformed). */
  async authenticate(presented: string): Promise<ApiPrincipal | null> {
    const parsed = parseApiKey(presented);
    if (!parsed) return null;
    const cached = this.#cache.get(parsed.keyId);
    if (cached !== undefined && cached.until > this.#now()) {
      if (!secretMatches(parsed.secret, cached.secretHash)) return null;
      // Re-inserted: the map's order is the order of last use, oldest first.
      this.#cache.delete(parsed.keyId);
      this.#cache.set(parsed.keyId, cached);
      return cached.principal;
    }
    this.#cache.delete(parsed.keyId);
    const changes = this.#changes;
    const row = await this.#read(parsed.keyId);
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) return null;
    const principal: ApiPrincipal = {
      keyId: row.key_id,
      tenantId: row.tenant_id,
      scopes: row.scopes as ApiScope[],
    };
    if (this.#ttlMs > 0 && changes === this.#changes && !this.#cache.has(row.key_id)) {
      this.#cache.set(row.key_id, {
        secretHash: Buffer.from(row.secret_hash, 'hex'),
        principal,
        until: this.#now() + this.#ttlMs,
      });
      while (this.#cache.size > this.#maxKeys) this.#cache.delete(this.#cache.keys().next().value!);
    }
    return principal;
  }

  /** The key's row if it exists and is not revoked: one database read however many ask at once. */
  #read(keyId: string): Promise<ApiKeyRow | undefined> {
    let reading = this.#reading.get(keyId);
    if (reading === undefined) {
      this.#reads += 1;
      reading = this.keys.findActive(keyId).finally(() => {
        if (this.#reading.get(keyId) === reading) this.#reading.delete(keyId);
      });
      this.#reading.set(keyId, reading);
    }
    return reading;
  }

  /** Database reads of keys so far: requests that waited on another's read do not count. */
  get keyReads(): number {
    return this.#reads;
  }

  /** Drops the key's entry and its read in flight (which may have started before a change to it). */
  #forget(keyId: string): void {
    this.#changes += 1;
    this.#cache.delete(keyId);
    this.#reading.delete(keyId);
  }

  /** Keys currently trusted without a database read (metrics, tests). */
  get cachedKeys(): number {
    return this.#cache.size;
  }

  async create(
    input: {
      tenantId: string;
      scopes: readonly ApiScope[];
      name: string | null;
    },
    tx?: Tx,
  ): Promise<{ key: string; record: ApiKeyRecord }> {
    const { key, keyId, secretHash } = generateApiKey();
    const row = await this.keys.insert(
      { keyId, secretHash, tenantId: input.tenantId, scopes: [...new Set(input.scopes)], name: input.name },
      tx,
    );
    return { key, record: toRecord(row) };
  }

  /** Makes `key` (from configuration) a valid admin key of `tenantId`; idempotent across restarts. */
  async ensureBootstrapKey(key: string, tenantId: string): Promise<void> {
    const parsed = parseApiKey(key);
    if (!parsed) throw new Error('the bootstrap admin key is malformed');
    this.#forget(parsed.keyId);
    await this.keys.upsertBootstrap({
      keyId: parsed.keyId,
      secretHash: hashSecret(parsed.secret),
      tenantId,
      scopes: ['admin', 'read', 'submit'],
    });
  }

  async list(tenantId?: string): Promise<ApiKeyRecord[]> {
    return (await this.keys.list(tenantId)).map(toRecord);
  }

  /** Revokes a key; false when there is no such key. */
  revoke(keyId: string): Promise<boolean> {
    this.#forget(keyId);
    return this.keys.revoke(keyId);
  }

  setDefaultSubnet(tenantId: string, subnetId: string | null, tx?: Tx): Promise<void> {
    return this.keys.setDefaultSubnet(tenantId, subnetId, tx);
  }

  defaultSubnet(tenantId: string): Promise<string | null> {
    return this.keys.defaultSubnet(tenantId);
  }
}
