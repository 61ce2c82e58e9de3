import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';

export const uniqueName = (label: string): string => `t_${label}_${randomBytes(5).toString('hex')}`;

export const dropSchema = async (schema: string): Promise<void> => {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
};

export const deleteStreams = async (servers: string, prefix: string): Promise<void> => {
  const nc = await connect({ servers });
  const jsm = await jetstreamManager(nc);
  for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) await jsm.streams.delete(name);
  await nc.close();
};

/** Waits until `probe` returns a truthy value; polls a system we cannot subscribe to, bounded in time. */
export const waitUntil = async <T>(
  probe: () => Promise<T>,
  description: string,
  timeoutMs = 30_000,
): Promise<NonNullable<T>> => {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${description} (last: ${JSON.stringify(last)})`,
      );
    await new Promise((r) => setTimeout(r, delay));
  }
};
