import { Kvm } from '@nats-io/kv';
import { prefixSubject } from '@gpunet/contracts';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCollector, natsUrl, type NatsTestContext, useNats } from '../src';

const streamNames = async (): Promise<string[]> => {
  const nc = await connect({ servers: natsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) names.push(name);
    return names;
  } finally {
    await nc.close();
  }
};

describe('useNats', () => {
  let nats: NatsTestContext;
  let neighbour: NatsTestContext;

  beforeAll(async () => {
    [nats, neighbour] = await Promise.all([
      useNats({ label: 'nats-own' }),
      useNats({ label: 'nats-neighbour' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([nats?.cleanup(), neighbour?.cleanup()]);
  });

  it('connects to the test server with a unique prefix', async () => {
    expect(nats.servers).toBe(natsUrl());
    expect(nats.prefix).toMatch(/^t_nats_own_[a-z0-9]{10}$/);
    expect(nats.prefix).not.toBe(neighbour.prefix);
    const seen = new EventCollector<string>('messages');
    const subject = prefixSubject(nats.prefix, 'ping');
    const sub = nats.nc.subscribe(subject, { callback: (_err, msg) => seen.push(msg.string()) });
    await nats.nc.flush();
    nats.nc.publish(subject, 'hello');
    await expect(seen.waitForCount(1, { timeoutMs: 5_000 })).resolves.toEqual(['hello']);
    sub.unsubscribe();
  });

  it('cleanup() deletes the namespace streams and KV buckets, nothing else, and closes the connection', async () => {
    const jsm = await nats.jsm();
    await jsm.streams.add({
      name: `${nats.prefix}_EVENTS`,
      subjects: [prefixSubject(nats.prefix, 'events.>')],
    });
    await jsm.streams.add({
      name: `${nats.prefix}_COMMANDS`,
      subjects: [prefixSubject(nats.prefix, 'cmd.>')],
    });
    await new Kvm(nats.nc).create(`${nats.prefix}_leases`);
    const other = await neighbour.jsm();
    await other.streams.add({
      name: `${neighbour.prefix}_EVENTS`,
      subjects: [prefixSubject(neighbour.prefix, 'events.>')],
    });

    await nats.cleanup();
    await nats.cleanup();

    const names = await streamNames();
    expect(names.filter((n) => n.includes(nats.prefix))).toEqual([]);
    expect(names).toContain(`${neighbour.prefix}_EVENTS`);
    expect(nats.nc.isClosed()).toBe(true);
  });

  it('cleans up with a connection of its own when the suite closed its connection', async () => {
    const ctx = await useNats({ label: 'nats-closed' });
    const jsm = await ctx.jsm();
    await jsm.streams.add({ name: `${ctx.prefix}_X`, subjects: [prefixSubject(ctx.prefix, 'x')] });
    await ctx.nc.close();
    await ctx.cleanup();
    expect((await streamNames()).filter((n) => n.startsWith(ctx.prefix))).toEqual([]);
  });

  it('names the target when it cannot connect', async () => {
    await expect(
      useNats({ servers: 'nats://127.0.0.1:1', connection: { reconnect: false } }),
    ).rejects.toThrow('cannot connect to NATS at nats://127.0.0.1:1');
  });
});
