import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateAdmissionKeys,
  generateKeyPair,
  issueAdmissionToken,
  keyBytes,
  RelayClient,
  RelayRejectedError,
  StunClient,
} from '@gpunet/overlay';
import { runService } from '@gpunet/service-runtime';
import { createMetricsRegistry } from '@gpunet/telemetry';
import { EventCollector, waitFor } from '@gpunet/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { relayConfigFromEnv } from '../src/app/relay.config';
import { RelayModule } from '../src/app/relay.module';
import { RelayServer } from '../src/infra/relay-server';
import { registerRelayMetrics } from '../src/infra/relay.metrics';

const control = generateAdmissionKeys();
const hour = () => Date.now() + 3_600_000;

interface Edge {
  readonly key: string;
  readonly client: RelayClient;
  readonly received: EventCollector<{ from: string; packet: string }>;
}

describe('RelayServer on loopback', () => {
  let server: RelayServer;
  const registry = createMetricsRegistry({ service: 'relay-test', defaultMetrics: false });
  const clients: RelayClient[] = [];

  const connect = async (
    jobId: string,
    options: { exp?: number; rate?: number; port?: number; signingKey?: string } = {},
  ): Promise<Edge> => {
    const key = generateKeyPair().publicKey;
    const received = new EventCollector<{ from: string; packet: string }>(`packets to ${key.slice(0, 6)}`);
    const client = new RelayClient({
      relay: { relayId: 'r1', host: '127.0.0.1', port: options.port ?? server.port, stunPorts: [] },
      token: issueAdmissionToken(
        {
          jobId,
          publicKey: key,
          exp: options.exp ?? hour(),
          ...(options.rate ? { rateBytesPerSec: options.rate } : {}),
        },
        options.signingKey ?? control.signingKey,
      ),
      onPacket: (from, packet) => received.push({ from: from.toString('base64'), packet: packet.toString() }),
      initialBackoffMs: 20,
      maxBackoffMs: 200,
    });
    clients.push(client);
    await client.start();
    return { key, client, received };
  };

  beforeAll(async () => {
    server = new RelayServer({
      relayId: 'r1',
      host: '127.0.0.1',
      port: 0,
      stunPorts: [0, 0],
      verifyKeys: [control.verifyKey],
      limits: { jobRateBytesPerSec: 0, jobBurstBytes: 0 },
    });
    registerRelayMetrics(registry, server);
    await server.start();
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('forwards packets between members of one job, keyed by public key, both ways', async () => {
    const a = await connect('job-a');
    const b = await connect('job-a');
    expect(a.client.hello).toMatchObject({ relayId: 'r1', jobId: 'job-a' });
    expect(a.client.send(keyBytes(b.key), Buffer.from('hello b'))).toBe(true);
    expect(b.client.send(keyBytes(a.key), Buffer.from('hello a'))).toBe(true);
    expect(await b.received.waitFor((p) => p.packet === 'hello b')).toEqual({
      from: a.key,
      packet: 'hello b',
    });
    expect(await a.received.waitFor((p) => p.packet === 'hello a')).toEqual({
      from: b.key,
      packet: 'hello a',
    });
  });

  it('never forwards to another job, and counts what it drops and forwards per job', async () => {
    const a1 = await connect('job-iso-a');
    const a2 = await connect('job-iso-a');
    const b = await connect('job-iso-b');
    b.client.send(keyBytes(a1.key), Buffer.from('from b'));
    a1.client.send(keyBytes(b.key), Buffer.from('from a'));
    a1.client.send(keyBytes(generateKeyPair().publicKey), Buffer.from('to nobody'));
    a1.client.send(keyBytes(a2.key), Buffer.from('x'.repeat(100)));
    await a2.received.waitFor((p) => p.packet.length === 100);
    await waitFor(() => (server.table.accounts().get('job-iso-a')?.dropped['no-such-peer'] ?? 0) >= 1);
    expect(server.table.accounts().get('job-iso-a')).toMatchObject({
      forwardedPackets: 1,
      forwardedBytes: 100,
      members: 2,
      dropped: { 'other-job': 1, 'no-such-peer': 1, 'rate-limited': 0, 'queue-full': 0 },
    });
    expect(server.table.accounts().get('job-iso-b')?.dropped['other-job']).toBe(1);
    expect(a1.received.items).toEqual([]);
    expect(b.received.items).toEqual([]);
    const text = await registry.metrics();
    expect(text).toMatch(/gpunet_relay_forwarded_bytes_total\{job="job-iso-a",service="relay-test"\} 100/);
    expect(text).toMatch(
      /gpunet_relay_dropped_packets_total\{job="job-iso-b",reason="other-job",service="relay-test"\} 1/,
    );
    expect(text).toMatch(/gpunet_relay_job_members\{job="job-iso-a",service="relay-test"\} 2/);
  });

  it.each([
    { name: 'an untrusted signer', options: { signingKey: generateAdmissionKeys().signingKey } },
    { name: 'an expired admission', options: { exp: Date.now() - 1 } },
  ])('refuses $name', async ({ options }) => {
    const before = server.rejected['admission-rejected'];
    await expect(connect('job-x', options)).rejects.toBeInstanceOf(RelayRejectedError);
    expect(server.rejected['admission-rejected']).toBe(before + 1);
  });

  it("drops what exceeds the job's budget (the admitted rate)", async () => {
    const a = await connect('job-rate', { rate: 10_000 });
    const b = await connect('job-rate', { rate: 10_000 });
    // Burst is 64 KiB at least: 100 packets of 1 KB exceed it.
    for (let i = 0; i < 100; i++) a.client.send(keyBytes(b.key), Buffer.alloc(1000, 1));
    await waitFor(() => {
      const account = server.table.accounts().get('job-rate');
      return account && account.forwardedPackets + account.dropped['rate-limited'] === 100;
    });
    const account = server.table.accounts().get('job-rate')!;
    expect(account.forwardedPackets).toBeGreaterThanOrEqual(60);
    expect(account.forwardedPackets).toBeLessThan(70);
    expect(account.dropped['rate-limited']).toBe(100 - account.forwardedPackets);
  });

  it('lets the newest connection of a key take over', async () => {
    const a = await connect('job-dup');
    const b = await connect('job-dup');
    const token = issueAdmissionToken(
      { jobId: 'job-dup', publicKey: b.key, exp: hour() },
      control.signingKey,
    );
    const received = new EventCollector<string>('packets to the second connection');
    const second = new RelayClient({
      relay: { relayId: 'r1', host: '127.0.0.1', port: server.port, stunPorts: [] },
      token,
      onPacket: (_from, packet) => received.push(packet.toString()),
    });
    clients.push(second);
    await second.start();
    a.client.send(keyBytes(b.key), Buffer.from('to the newest'));
    await received.waitFor((p) => p === 'to the newest');
    expect(b.received.items).toEqual([]);
  });

  it('answers STUN Binding requests with the source address and port it saw', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    const stun = new StunClient();
    socket.on('message', (datagram) => stun.handle(datagram));
    const [p1, p2] = server.stunPorts;
    const local = `127.0.0.1:${socket.address().port}`;
    const mapped = [await stun.query(socket, '127.0.0.1', p1!), await stun.query(socket, '127.0.0.1', p2!)];
    socket.close();
    expect(mapped).toEqual([local, local]);
  });
});

describe('relay restarts and TLS', () => {
  it('edges reconnect by themselves after the relay restarts on the same port', async () => {
    const options = {
      relayId: 'r2',
      host: '127.0.0.1',
      port: 0,
      stunPorts: [],
      verifyKeys: [control.verifyKey],
      limits: { jobRateBytesPerSec: 0, jobBurstBytes: 0 },
    };
    let server = new RelayServer(options);
    await server.start();
    const port = server.port;
    const edges = [generateKeyPair().publicKey, generateKeyPair().publicKey];
    const received = new EventCollector<string>('packets');
    const clients = edges.map(
      (key) =>
        new RelayClient({
          relay: { relayId: 'r2', host: '127.0.0.1', port, stunPorts: [] },
          token: issueAdmissionToken(
            { jobId: 'job-restart', publicKey: key, exp: hour() },
            control.signingKey,
          ),
          onPacket: (_from, packet) => received.push(packet.toString()),
          initialBackoffMs: 20,
          maxBackoffMs: 200,
        }),
    );
    try {
      await Promise.all(clients.map((c) => c.start()));
      await server.stop();
      await waitFor(() => clients.every((c) => !c.connected), { description: 'clients to notice' });
      server = new RelayServer({ ...options, port });
      await server.start();
      await waitFor(() => clients.every((c) => c.connected), { description: 'clients to reconnect' });
      clients[0]!.send(keyBytes(edges[1]!), Buffer.from('after restart'));
      await received.waitFor((p) => p === 'after restart');
      expect(clients.map((c) => c.stats.connects)).toEqual([2, 2]);
    } finally {
      for (const c of clients) c.close();
      await server.stop();
    }
  });

  it('serves TLS when given a certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=relay.test',
          '-addext',
          'subjectAltName=DNS:relay.test',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      const server = new RelayServer({
        relayId: 'r3',
        host: '127.0.0.1',
        port: 0,
        stunPorts: [],
        verifyKeys: [control.verifyKey],
        limits: { jobRateBytesPerSec: 0, jobBurstBytes: 0 },
        tls: { cert, key: readFileSync(join(dir, 'key.pem'), 'utf8') },
      });
      await server.start();
      const key = generateKeyPair().publicKey;
      const client = new RelayClient({
        relay: {
          relayId: 'r3',
          host: '127.0.0.1',
          port: server.port,
          stunPorts: [],
          tls: true,
          servername: 'relay.test',
        },
        token: issueAdmissionToken({ jobId: 'job-tls', publicKey: key, exp: hour() }, control.signingKey),
        ca: cert,
        onPacket: () => undefined,
      });
      try {
        expect(await client.start()).toMatchObject({ relayId: 'r3', jobId: 'job-tls' });
      } finally {
        client.close();
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the relay service', () => {
  it('boots with runService, serves its metrics and stops', async () => {
    const config = relayConfigFromEnv({
      RELAY_ID: 'svc',
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_STUN_PORTS: '0',
      RELAY_VERIFY_KEYS: control.verifyKey,
    });
    const service = await runService({
      name: 'relay',
      transport: false,
      module: ({ metrics, logger }) => RelayModule.forRoot({ config, metrics, logger }),
      metricsPort: 0,
      handleSignals: false,
      env: {},
    });
    try {
      const text = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text();
      expect(text).toContain('gpunet_relay_connections{service="relay"} 0');
    } finally {
      await service.close();
    }
  });
});
