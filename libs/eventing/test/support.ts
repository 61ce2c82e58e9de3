import { databaseUrl, deleteNamespaceStreams, natsUrl, testNamespace, waitFor } from '@gpunet/testing';
import pg from 'pg';

export const DATABASE_URL = databaseUrl();
export const NATS_URL = natsUrl();

/** A unique schema name / NATS prefix for this suite. */
export const uniqueName = (label: string): string => testNamespace(label);

export const dropSchema = async (schema: string): Promise<void> => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
};

export const deleteStreams = async (servers: string, prefix: string): Promise<void> => {
  await deleteNamespaceStreams(undefined, servers, prefix);
};

/** Waits for a condition in Postgres or JetStream (systems we cannot subscribe to), bounded in time. */
export const waitUntil = <T>(
  probe: () => Promise<T>,
  description: string,
  timeoutMs = 30_000,
): Promise<NonNullable<T>> => waitFor(probe, { description, timeoutMs });

export { bootOnTransport } from './boot';
