import type { NatsHandle } from '@gpunet/eventing';
import pg from 'pg';

/** Removes what a bench run made: the JetStream streams under its `prefix`, its Postgres schemas. */
export const removeBenchState = async (
  nats: NatsHandle,
  databaseUrl: string,
  prefix: string,
  schemas: readonly string[],
): Promise<void> => {
  for await (const name of nats.jsm.streams.names())
    if (name.startsWith(prefix)) await nats.jsm.streams.delete(name);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
};
