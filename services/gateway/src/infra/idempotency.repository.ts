import type { Tx } from '@gpunet/eventing';

/** A key's row of `idempotency`: the request it was first used with and, once done, its response. */
export interface IdempotencyRow {
  readonly requestHash: string;
  /** Set when the first request's transaction commits (until then it holds the row). */
  readonly status: number;
  readonly body: unknown;
  /** The correlation the first request started (`X-Correlation-Id`); null when it started none. */
  readonly correlationId: string | null;
}

/** (tenant, Idempotency-Key) → request hash and response, always in the request's transaction. */
export class IdempotencyRepository {
  /** Inserts the key's row; false when it exists (after waiting for a transaction that holds it). */
  async claim(tx: Tx, tenantId: string, key: string, requestHash: string): Promise<boolean> {
    const inserted = await tx.query(
      `INSERT INTO "${tx.schema}".idempotency (tenant_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, key) DO NOTHING RETURNING 1`,
      [tenantId, key, requestHash],
    );
    return inserted.length > 0;
  }

  async find(tx: Tx, tenantId: string, key: string): Promise<IdempotencyRow | undefined> {
    const rows = await tx.query<{
      request_hash: string;
      status: number;
      body: unknown;
      correlation_id: string | null;
    }>(
      `SELECT request_hash, status, body, correlation_id FROM "${tx.schema}".idempotency
       WHERE tenant_id = $1 AND key = $2`,
      [tenantId, key],
    );
    const row = rows[0];
    return row
      ? {
          requestHash: row.request_hash,
          status: row.status,
          body: row.body,
          correlationId: row.correlation_id,
        }
      : undefined;
  }

  /** Stores the response a claimed key's request produced, for its replays. */
  async complete(
    tx: Tx,
    tenantId: string,
    key: string,
    response: { status: number; body: unknown; correlationId: string | null },
  ): Promise<void> {
    await tx.execute(
      `UPDATE "${tx.schema}".idempotency SET status = $3, body = $4, correlation_id = $5
       WHERE tenant_id = $1 AND key = $2`,
      [tenantId, key, response.status, JSON.stringify(response.body), response.correlationId],
    );
  }
}
