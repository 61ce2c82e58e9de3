import { Database } from '@gpunet/eventing';
import { FakeClock, type PostgresTestSchema, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../src/app/api-keys';
import { ApiKeysRepository } from '../src/infra/api-keys.repository';
import { gatewayMigrations } from '../src/infra/gateway.migrations';

/*
 * The authenticated-key cache (bench/gateway: the key lookup was one of two Postgres round trips
 * per read). What it may never do: accept a wrong secret, outlive its TTL, or keep a key this
 * process revoked.
 */
describe('ApiKeyStore: authenticated keys are cached for a bounded time (real Postgres)', () => {
  let pg: PostgresTestSchema;
  let db: Database;

  beforeAll(async () => {
    pg = await usePostgres({ label: 'gateway_keys' });
    db = await new Database({
      url: pg.connectionString,
      schema: pg.schema,
      migrations: gatewayMigrations,
    }).open();
  });
  afterAll(async () => {
    await db?.close();
    await pg?.drop();
  });

  /** Revokes behind the store's back, as another gateway replica would. */
  const revokeElsewhere = (keyId: string) =>
    db.execute(`UPDATE "${db.schema}".api_keys SET revoked_at = now() WHERE key_id = $1`, [keyId]);

  it('trusts a key for its TTL without the database, then reads it again and sees a revocation', async () => {
    const clock = new FakeClock();
    const store = new ApiKeyStore(new ApiKeysRepository(db), {
      cacheTtlMs: 5_000,
      now: () => clock.now().getTime(),
    });
    const { key, record } = await store.create({ tenantId: 't-ttl', scopes: ['read'], name: null });
    await expect(store.authenticate(key)).resolves.toEqual({
      keyId: record.keyId,
      tenantId: 't-ttl',
      scopes: ['read'],
    });
    expect(store.cachedKeys).toBe(1);

    await revokeElsewhere(record.keyId);
    clock.advance(4_999);
    await expect(store.authenticate(key)).resolves.toMatchObject({ tenantId: 't-ttl' });
    clock.advance(1);
    await expect(store.authenticate(key)).resolves.toBeNull();
    expect(store.cachedKeys).toBe(0);
  });

  it('refuses a wrong secret for a cached key id, and a key this process revoked at once', async () => {
    const clock = new FakeClock();
    const store = new ApiKeyStore(new ApiKeysRepository(db), {
      cacheTtlMs: 60_000,
      now: () => clock.now().getTime(),
    });
    const { key, record } = await store.create({ tenantId: 't-rev', scopes: ['read', 'submit'], name: null });
    await expect(store.authenticate(key)).resolves.not.toBeNull();
    const forged = `gpn_${record.keyId}_${'A'.repeat(43)}`;
    await expect(store.authenticate(forged)).resolves.toBeNull();
    await expect(store.authenticate(key)).resolves.not.toBeNull();

    await expect(store.revoke(record.keyId)).resolves.toBe(true);
    await expect(store.authenticate(key)).resolves.toBeNull();
  });

  it('with a TTL of 0 reads every time; the cache holds at most cacheMaxKeys, least recently used out first', async () => {
    const uncached = new ApiKeyStore(new ApiKeysRepository(db), { cacheTtlMs: 0 });
    const a = await uncached.create({ tenantId: 't-0', scopes: ['read'], name: null });
    await expect(uncached.authenticate(a.key)).resolves.not.toBeNull();
    expect(uncached.cachedKeys).toBe(0);
    await revokeElsewhere(a.record.keyId);
    await expect(uncached.authenticate(a.key)).resolves.toBeNull();

    const bounded = new ApiKeyStore(new ApiKeysRepository(db), { cacheTtlMs: 60_000, cacheMaxKeys: 2 });
    const keys = await Promise.all(
      ['t-1', 't-2', 't-3'].map((tenantId) => bounded.create({ tenantId, scopes: ['read'], name: null })),
    );
    await bounded.authenticate(keys[0]!.key);
    await bounded.authenticate(keys[1]!.key);
    await bounded.authenticate(keys[0]!.key); // key 1 is now the least recently used
    await bounded.authenticate(keys[2]!.key);
    expect(bounded.cachedKeys).toBe(2);
    // Key 1 left the cache: revoked elsewhere, it is refused at once; key 0 is still trusted.
    await revokeElsewhere(keys[1]!.record.keyId);
    await revokeElsewhere(keys[0]!.record.keyId);
    await expect(bounded.authenticate(keys[1]!.key)).resolves.toBeNull();
    await expect(bounded.authenticate(keys[0]!.key)).resolves.not.toBeNull();
  });

  it('reads an expired key once for all the requests that need it meanwhile', async () => {
    const clock = new FakeClock();
    const store = new ApiKeyStore(new ApiKeysRepository(db), {
      cacheTtlMs: 5_000,
      now: () => clock.now().getTime(),
    });
    const { key, record } = await store.create({ tenantId: 't-herd', scopes: ['read'], name: null });
    const forged = `gpn_${record.keyId}_${'A'.repeat(43)}`;
    const burst = () =>
      Promise.all([...Array.from({ length: 20 }, () => store.authenticate(key)), store.authenticate(forged)]);

    const first = await burst();
    expect(first.slice(0, 20).every((p) => p?.tenantId === 't-herd')).toBe(true);
    expect(first[20]).toBeNull();
    expect(store.keyReads).toBe(1);

    clock.advance(5_000);
    await revokeElsewhere(record.keyId);
    await expect(burst()).resolves.toEqual(Array.from({ length: 21 }, () => null));
    expect(store.keyReads).toBe(2);
  });

  it('does not cache what a read begun before this process revoked the key returned', async () => {
    const store = new ApiKeyStore(new ApiKeysRepository(db), { cacheTtlMs: 60_000 });
    const { key, record } = await store.create({ tenantId: 't-race', scopes: ['read'], name: null });
    const before = store.authenticate(key); // its read is in flight …
    await store.revoke(record.keyId); // … when the key is revoked here
    await before; // (it may still answer: it began first)
    await expect(store.authenticate(key)).resolves.toBeNull();
    expect(store.cachedKeys).toBe(0);
  });
});
