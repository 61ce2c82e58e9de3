import type { Database, Tx } from '@gpunet/eventing';

/** A row of `api_keys`, as stored. */
export interface ApiKeyRow {
  readonly key_id: string;
  /** SHA-256 of the secret, hex. */
  readonly secret_hash: string;
  readonly tenant_id: string;
  readonly scopes: string[];
  readonly name: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

/** API keys and tenants' defaults in the gateway's schema (`api_keys`, `tenants`). */
export class ApiKeysRepository {
  constructor(private readonly db: Database) {}

  private get s(): string {
    return this.db.schema;
  }

  /** The key's row if it exists and is not revoked (straight on the pool: every request reads keys). */
  async findActive(keyId: string): Promise<ApiKeyRow | undefined> {
    const rows = await this.db.read<ApiKeyRow>(
      `SELECT * FROM "${this.s}".api_keys WHERE key_id = $1 AND revoked_at IS NULL`,
      [keyId],
    );
    return rows[0];
  }

  async insert(
    key: {
      keyId: string;
      secretHash: string;
      tenantId: string;
      scopes: readonly string[];
      name: string | null;
    },
    tx?: Tx,
  ): Promise<ApiKeyRow> {
    const rows = await (tx ?? this.db).query<ApiKeyRow>(
      `INSERT INTO "${this.s}".api_keys (key_id, secret_hash, tenant_id, scopes, name)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [key.keyId, key.secretHash, key.tenantId, [...key.scopes], key.name],
    );
    return rows[0]!;
  }

  /** Makes the key valid with these scopes (a revoked one again), whatever it was. */
  async upsertBootstrap(key: {
    keyId: string;
    secretHash: string;
    tenantId: string;
    scopes: readonly string[];
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO "${this.s}".api_keys (key_id, secret_hash, tenant_id, scopes, name)
       VALUES ($1, $2, $3, $4, 'bootstrap')
       ON CONFLICT (key_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, tenant_id = EXCLUDED.tenant_id,
         scopes = EXCLUDED.scopes, revoked_at = NULL`,
      [key.keyId, key.secretHash, key.tenantId, [...key.scopes]],
    );
  }

  list(tenantId?: string): Promise<ApiKeyRow[]> {
    return this.db.query<ApiKeyRow>(
      tenantId === undefined
        ? `SELECT * FROM "${this.s}".api_keys ORDER BY created_at, key_id`
        : `SELECT * FROM "${this.s}".api_keys WHERE tenant_id = $1 ORDER BY created_at, key_id`,
      tenantId === undefined ? [] : [tenantId],
    );
  }

  /** Revokes a key (once: a second revocation keeps the first time); false when there is none. */
  async revoke(keyId: string): Promise<boolean> {
    const n = await this.db.execute(
      `UPDATE "${this.s}".api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE key_id = $1`,
      [keyId],
    );
    return n > 0;
  }

  async setDefaultSubnet(tenantId: string, subnetId: string | null, tx?: Tx): Promise<void> {
    await (tx ?? this.db).execute(
      `INSERT INTO "${this.s}".tenants (tenant_id, default_subnet) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET default_subnet = EXCLUDED.default_subnet`,
      [tenantId, subnetId],
    );
  }

  async defaultSubnet(tenantId: string): Promise<string | null> {
    const rows = await this.db.query<{ default_subnet: string | null }>(
      `SELECT default_subnet FROM "${this.s}".tenants WHERE tenant_id = $1`,
      [tenantId],
    );
    return rows[0]?.default_subnet ?? null;
  }
}
