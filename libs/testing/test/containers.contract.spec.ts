import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type NatsContainer,
  type PostgresContainer,
  requireDocker,
  startNatsContainer,
  startPostgresContainer,
  testNamespace,
} from '../src';

// Fails under CI when Docker does not answer; skips loudly elsewhere.
const docker = await requireDocker('libs/testing container helpers');

/** Host addresses Docker published a container port on. */
const publishedOn = async (container: { getId(): string }, port: string): Promise<string[]> => {
  const { request } = await import('node:http');
  const inspect = await new Promise<{
    NetworkSettings: { Ports: Record<string, { HostIp: string }[] | null> };
  }>((resolve, reject) => {
    request({ socketPath: '/var/run/docker.sock', path: `/containers/${container.getId()}/json` }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(JSON.parse(body)));
    })
      .on('error', reject)
      .end();
  });
  return (inspect.NetworkSettings.Ports[port] ?? []).map((b) => b.HostIp);
};

describe.skipIf(!docker)('startNatsContainer', () => {
  let nats: NatsContainer;
  beforeAll(async () => {
    nats = await startNatsContainer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it('runs NATS with JetStream: a stream takes a published message', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'CONTRACT', subjects: ['contract.>'] });
      await expect(jetstream(nc).publish('contract.hello', 'hi')).resolves.toMatchObject({
        stream: 'CONTRACT',
        seq: 1,
      });
      expect((await jsm.streams.info('CONTRACT')).state.messages).toBe(1);
    } finally {
      await nc.close();
    }
  });

  it('serves monitoring, and publishes ports on loopback only', async () => {
    const res = await fetch(`${nats.monitorUrl}/healthz?js-enabled-only=true`);
    expect(res.status).toBe(200);
    expect(await publishedOn(nats.container, '4222/tcp')).toEqual(['127.0.0.1']);
  });
});

describe.skipIf(!docker)('startPostgresContainer', () => {
  let postgres: PostgresContainer;
  beforeAll(async () => {
    postgres = await startPostgresContainer();
  });
  afterAll(async () => {
    await postgres?.stop();
  });

  it('runs PostgreSQL with the requested user, password and database', async () => {
    expect(postgres.connectionString).toMatch(/^postgres:\/\/test:test@127\.0\.0\.1:\d+\/test$/);
    const client = new pg.Client({ connectionString: postgres.connectionString });
    await client.connect();
    try {
      await client.query('CREATE TABLE contract (id int PRIMARY KEY)');
      await client.query('INSERT INTO contract VALUES (1), (2)');
      const { rows } = await client.query<{ n: number; who: string; db: string }>(
        'SELECT count(*)::int AS n, current_user AS who, current_database() AS db FROM contract',
      );
      expect(rows).toEqual([{ n: 2, who: 'test', db: 'test' }]);
    } finally {
      await client.end();
    }
  });

  it('rejects a wrong password (password auth is on, as upstream), and publishes on loopback only', async () => {
    const url = new URL(postgres.connectionString);
    url.password = 'wrong';
    const client = new pg.Client({ connectionString: url.toString() });
    await expect(client.connect()).rejects.toThrow(/password authentication failed/);
    expect(await publishedOn(postgres.container, '5432/tcp')).toEqual(['127.0.0.1']);
  });
});

describe.skipIf(!docker)('a missing image', () => {
  it('names the script that builds it, keeping the engine error as the cause', async () => {
    const image = `${testNamespace('missing')}:0`;
    const error = (await startNatsContainer({ image }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`could not start a container from ${image}`);
    expect(error.message).toContain('deploy/images/ensure-docker.sh');
    expect(error.cause).toBeInstanceOf(Error);
  });
});
