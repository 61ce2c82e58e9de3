import { Client } from 'pg';

export interface PlacerLeaseOptions {
  readonly databaseUrl: string;
  /** The scheduler's schema: one placer per schema. */
  readonly schema: string;
  /** The lease's connection failed: whatever it held went with it. */
  readonly onLost: (error: unknown) => void;
}

/**
 * The placer lease: a Postgres session advisory lock on a connection of its own, held for as long
 * as that connection lives. Whoever holds it places; when its connection goes (the process died,
 * the network parted), so does the lock, and a standby's next `tryAcquire` gets it.
 */
export class PostgresPlacerLease {
  private client: Client | undefined;

  constructor(private readonly options: PlacerLeaseOptions) {}

  /** Takes the lease unless another session holds it; true when this one holds it now. */
  async tryAcquire(): Promise<boolean> {
    if (!this.client) {
      const client = new Client({
        connectionString: this.options.databaseUrl,
        application_name: 'gpunet-scheduler-lease',
      });
      client.on('error', (error) => this.lost(client, error));
      await client.connect();
      this.client = client;
    }
    const { rows } = await this.client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
      [`gpunet-scheduler-placer:${this.options.schema}`],
    );
    return rows[0]?.locked === true;
  }

  /** Gives the lease up (closing its connection). Idempotent. */
  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private lost(client: Client, error: unknown): void {
    if (this.client === client) this.client = undefined;
    void client.end().catch(() => undefined);
    this.options.onLost(error);
  }
}
