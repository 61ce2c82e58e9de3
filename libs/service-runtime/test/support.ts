import { Writable } from 'node:stream';
import { createRegistry, defineEvent, defineStream } from '@gpunet/contracts';
import { EventingModule, type EventingOptions } from '@gpunet/eventing';
import { createLogger, type Logger } from '@gpunet/telemetry';
import { databaseUrl, deleteNamespaceStreams, natsUrl } from '@gpunet/testing';
import type { DynamicModule } from '@nestjs/common';
import pg from 'pg';
import { z } from 'zod';

/** The probe services' stream and event. */
export const ProbeStream = defineStream({
  name: 'PROBES',
  subjects: ['probes.>'],
  description: 'probe events',
});
export const ProbeSent = defineEvent({
  type: 'probe.sent',
  version: 1,
  subject: 'probes.probe.sent.v1',
  stream: ProbeStream.name,
  description: 'a probe was sent',
  schema: z.strictObject({ probeId: z.string().min(1) }),
});

/** A logger whose JSON lines are kept, parsed, in `lines`. */
export const memoryLogger = (service = 'probe'): { lines: Record<string, unknown>[]; logger: Logger } => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service, destination }) };
};

const withClient = async (work: (client: pg.Client) => Promise<void>): Promise<void> => {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
};

/** `schema` with a table of probe ids the handlers write. */
export const createProbeTable = (schema: string, table: string): Promise<void> =>
  withClient(async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".${table} (probe_id text PRIMARY KEY)`);
  });

/** Removes a suite's streams and schema. */
export const dropProbeNamespace = async (prefix: string, schema: string): Promise<void> => {
  await deleteNamespaceStreams(undefined, natsUrl(), prefix);
  await withClient(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
};

/** The eventing of a probe service on the local Postgres and NATS: `ProbeSent` on `ProbeStream`. */
export const probeEventing = (
  service: string,
  at: { readonly prefix: string; readonly schema: string },
  options: Partial<Omit<EventingOptions, 'service' | 'database' | 'nats' | 'prefix'>> = {},
): DynamicModule =>
  EventingModule.forRoot({
    service,
    database: { url: databaseUrl(), schema: at.schema },
    nats: { servers: natsUrl() },
    registry: createRegistry([ProbeSent]),
    streams: [ProbeStream],
    prefix: at.prefix,
    ...options,
  });
