import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EventCollector, NatsServerExitedError, type NatsServerProcess, startNatsServer } from '../src';

const canConnect = async (url: string): Promise<boolean> => {
  try {
    const nc = await connect({ servers: url, reconnect: false, timeout: 1_000 });
    await nc.close();
    return true;
  } catch {
    return false;
  }
};

describe('startNatsServer', () => {
  const servers: NatsServerProcess[] = [];
  const clients: NatsConnection[] = [];
  const track = (s: NatsServerProcess): NatsServerProcess => (servers.push(s), s);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((nc) => nc.close()));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.dispose()));
  });

  it('starts a JetStream server of its own on a free loopback port', async () => {
    const server = track(await startNatsServer());
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    expect(server.running).toBe(true);
    const nc = await connect({ servers: server.url });
    clients.push(nc);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'OUTAGE', subjects: ['outage.>'] });
    await expect(jetstream(nc).publish('outage.one', 'x')).resolves.toMatchObject({
      stream: 'OUTAGE',
      seq: 1,
    });
  });

  it('stop() makes it unreachable; start() brings it back on the same port with its JetStream data', async () => {
    const server = track(await startNatsServer());
    const port = server.port;
    const writer = await connect({ servers: server.url, reconnect: false });
    await (await jetstreamManager(writer)).streams.add({ name: 'KEEP', subjects: ['keep.>'] });
    await jetstream(writer).publish('keep.a', 'kept');
    await writer.close();

    await server.stop();
    expect(server.running).toBe(false);
    await expect(canConnect(server.url)).resolves.toBe(false);

    await server.start();
    expect(server.port).toBe(port);
    const nc = await connect({ servers: server.url });
    clients.push(nc);
    const info = await (await jetstreamManager(nc)).streams.info('KEEP');
    expect(info.state.messages).toBe(1);
  });

  it('a client with reconnect sees the outage and the recovery', async () => {
    const server = track(await startNatsServer());
    const nc = await connect({
      servers: server.url,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 50,
    });
    clients.push(nc);
    const statuses = new EventCollector<string>('connection status');
    void (async () => {
      for await (const s of nc.status()) statuses.push(s.type);
    })();

    await server.kill();
    await statuses.waitFor((t) => t === 'disconnect', { timeoutMs: 10_000 });
    await server.start();
    await statuses.waitFor((t) => t === 'reconnect', { timeoutMs: 15_000 });
    await expect(
      nc.request('$JS.API.INFO', undefined, { timeout: 5_000 }).then((m) => m.json()),
    ).resolves.toMatchObject({
      type: 'io.nats.jetstream.api.v1.account_info_response',
    });
  });

  it('kill() crashes it, and start() is a no-op while running', async () => {
    const server = track(await startNatsServer({ jetstream: false }));
    await server.start();
    expect(server.running).toBe(true);
    await server.kill();
    expect(server.running).toBe(false);
    await expect(canConnect(server.url)).resolves.toBe(false);
    await server.start();
    await expect(canConnect(server.url)).resolves.toBe(true);
  });

  it('fails fast with the server log when the port is taken', async () => {
    const first = track(await startNatsServer({ jetstream: false }));
    const started = performance.now();
    const error = (await startNatsServer({
      jetstream: false,
      port: first.port,
      readyTimeoutMs: 30_000,
    }).catch((e: unknown) => e)) as Error;
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(error.cause).toBeInstanceOf(NatsServerExitedError);
    expect(error.message).toMatch(/address already in use/);
  });

  it('reports a missing binary', async () => {
    const error = (await startNatsServer({ binary: '/nonexistent/nats-server' }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.cause).toBeInstanceOf(NatsServerExitedError);
    expect((error.cause as Error).message).toMatch(/ENOENT/);
  });

  it('dispose() removes the store dir and forbids a restart', async () => {
    const { existsSync } = await import('node:fs');
    const server = await startNatsServer();
    await server.dispose();
    await server.dispose();
    expect(existsSync(server.storeDir)).toBe(false);
    await expect(server.start()).rejects.toThrow(/after dispose/);
  });
});
