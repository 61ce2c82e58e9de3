import { databaseUrl, natsUrl } from '@gpunet/testing';
import { busContract } from './suites/bus.suite';
import { eventStoreContract } from './suites/event-store.suite';

// The port contracts against the machine's own Postgres and NATS.
eventStoreContract('local Postgres', databaseUrl);
busContract('local NATS', () => ({ nats: natsUrl(), database: databaseUrl() }));
