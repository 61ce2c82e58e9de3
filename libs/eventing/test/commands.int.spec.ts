import {
  buildEnvelope,
  createRegistry,
  defineCommand,
  defineStream,
  namespacedStream,
} from '@gpunet/contracts';
import { type NatsTestContext, type PostgresTestSchema, useNats, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  connectNats,
  Database,
  enqueueOutbox,
  ensureStreams,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
} from '../src';
import { CounterIncremented } from './fixtures/counter';

const CommandsStream = defineStream({
  name: 'TEST_COMMANDS',
  subjects: ['cmd.>'],
  description: 'test commands',
});
const StartRank = defineCommand({
  type: 'edge.start-rank',
  version: 1,
  subject: 'cmd.edge.{edgeId}.start-rank.v1',
  stream: CommandsStream.name,
  description: 'test',
  schema: z.strictObject({ rank: z.int().min(0) }),
});

let pgSchema: PostgresTestSchema;
let natsContext: NatsTestContext;
let db: Database;
let nats: NatsHandle;

beforeAll(async () => {
  pgSchema = await usePostgres({ label: 'commands' });
  natsContext = await useNats({ label: 'commands' });
  db = await new Database({ url: pgSchema.connectionString, schema: pgSchema.schema }).open();
  nats = await connectNats({ servers: natsContext.servers, name: 'commands-test' });
  await ensureStreams(nats.jsm, [CommandsStream], natsContext.prefix);
});
afterAll(async () => {
  await nats.close();
  await natsContext.cleanup();
  await db.close();
  await pgSchema.drop();
});

describe('commands through the outbox', () => {
  it('a command enqueued in a committed transaction is published to its per-edge subject; a rolled-back one never is', async () => {
    const store = new PostgresEventStore(db, createRegistry([CounterIncremented]), natsContext.prefix);
    const command = buildEnvelope(StartRank, { rank: 3 }, { streamId: 'job-1' });
    await db.transaction((tx) =>
      enqueueOutbox(
        tx,
        [{ envelope: command, subject: StartRank.subject({ edgeId: 'edge-a' }, natsContext.prefix) }],
        store.notifier,
      ),
    );
    const lost = buildEnvelope(StartRank, { rank: 4 }, { streamId: 'job-1' });
    await expect(
      db.transaction(async (tx) => {
        await enqueueOutbox(
          tx,
          [{ envelope: lost, subject: StartRank.subject({ edgeId: 'edge-a' }, natsContext.prefix) }],
          store.notifier,
        );
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');

    await new OutboxRelay({ db, js: nats.js, channel: store.channel }).drain();
    const stream = namespacedStream(CommandsStream, natsContext.prefix).name;
    expect((await nats.jsm.streams.info(stream)).state.messages).toBe(1);
    const stored = await nats.jsm.streams.getMessage(stream, { seq: 1 });
    expect(stored?.subject).toBe(`${natsContext.prefix}.cmd.edge.edge-a.start-rank.v1`);
    expect(createRegistry([StartRank]).parse(stored!.json())).toEqual(command);
  });
});
