import type { Database } from '@gpunet/eventing';

/**
 * Where each chain's deposit scan resumes (`chain_cursors`, migration 0001): the adapter's opaque
 * cursor per chain and asset. Written after the deposits it covers were recorded; a crash in between
 * only replays them, and a deposit is credited at most once.
 */
export class ChainCursorRepository {
  constructor(private readonly db: Database) {}

  async read(chain: string, asset: string): Promise<string | null> {
    const [row] = await this.db.query<{ cursor: string | null }>(
      `SELECT cursor FROM "${this.db.schema}".chain_cursors WHERE chain = $1 AND asset = $2`,
      [chain, asset],
    );
    return row?.cursor ?? null;
  }

  async write(chain: string, asset: string, cursor: string | null): Promise<void> {
    await this.db.query(
      `INSERT INTO "${this.db.schema}".chain_cursors (chain, asset, cursor) VALUES ($1, $2, $3)
       ON CONFLICT (chain, asset) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`,
      [chain, asset, cursor],
    );
  }
}
