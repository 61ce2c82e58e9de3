import type { NatsTestContext } from './nats';
import type { PostgresTestSchema } from './postgres';

/**
 * Where a service under test keeps its state and messages: the suite's own Postgres schema and NATS
 * namespace, without credentials (the shared development server). The shape of a service's
 * `ServiceConnection` (`@gpunet/eventing`), to spread into its configuration.
 */
export const serviceConnection = (
  pg: PostgresTestSchema,
  nats: NatsTestContext,
): {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly natsUrl: string;
  readonly natsSeed: null;
  readonly prefix: string;
} => ({
  databaseUrl: pg.connectionString,
  schema: pg.schema,
  natsUrl: [nats.servers].flat().join(','),
  natsSeed: null,
  prefix: nats.prefix,
});
