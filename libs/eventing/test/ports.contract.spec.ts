import {
  type NatsContainer,
  type PostgresContainer,
  requireDocker,
  startNatsContainer,
  startPostgresContainer,
} from '@gpunet/testing';
import { afterAll, beforeAll, describe } from 'vitest';
import { busContract } from './suites/bus.suite';
import { eventStoreContract } from './suites/event-store.suite';

// Fails under CI when Docker does not answer; skips loudly elsewhere.
const docker = await requireDocker('eventing port contracts');

describe.skipIf(!docker)('eventing port contracts in containers (testcontainers)', () => {
  let postgres: PostgresContainer;
  let nats: NatsContainer;
  beforeAll(async () => {
    [postgres, nats] = await Promise.all([startPostgresContainer(), startNatsContainer()]);
  });
  afterAll(async () => {
    await Promise.all([postgres?.stop(), nats?.stop()]);
  });

  eventStoreContract('Postgres container', () => postgres.connectionString);
  busContract('NATS and Postgres containers', () => ({
    nats: nats.url,
    database: postgres.connectionString,
  }));
});
