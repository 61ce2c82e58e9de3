/** The Postgres the int tier uses: `DATABASE_URL`, else the machine's own on 127.0.0.1:5432 (trust auth). */
export const databaseUrl = (): string =>
  process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The NATS server (JetStream enabled) the int tier uses: `NATS_URL`, else 127.0.0.1:4222. */
export const natsUrl = (): string => process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
