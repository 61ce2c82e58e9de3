import { buildEnvelope, FindCandidates, ReservationReplySchema, ReserveOnEdge } from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { type NatsServerProcess, startNatsServer, waitFor } from '@gpunet/testing';
import { type Msg, type NatsConnection, nkeyAuthenticator } from '@nats-io/nats-core';
import { createUser, type KeyPair } from '@nats-io/nkeys';
import { connect } from '@nats-io/transport-node';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderNatsAuth } from '../src/infra/nats-auth/nats-auth.config';
import {
  type DiscoveryUnderTest,
  type EdgeProcess,
  gpuRequirement,
  REPO,
  removeEdge,
  startDiscovery,
  startEdgeProcess,
} from './support/harness';

interface Client {
  readonly nc: NatsConnection;
  /** Errors the server sent this client (permission violations). */
  readonly errors: string[];
}

const seedOf = (kp: KeyPair): string => new TextDecoder().decode(kp.getSeed());

/**
 * A second nats-server with deploy/nats/gpunet.conf and an auth.conf rendered for two services and
 * two edges: the server, not the clients, enforces who may publish and read what.
 */
describe('NATS permissions (deploy/nats on a dedicated nats-server)', () => {
  const discoveryKey = createUser();
  const schedulerKey = createUser();
  const edgeA = createUser();
  const edgeB = createUser();
  const A = edgeA.getPublicKey();
  const B = edgeB.getPublicKey();
  let dir: string;
  let server: NatsServerProcess;
  const clients: Client[] = [];

  const connectAs = async (kp: KeyPair | null, inboxPrefix?: string): Promise<Client> => {
    const nc = await connect({
      servers: server.url,
      reconnect: false,
      ...(kp ? { authenticator: nkeyAuthenticator(kp.getSeed()) } : {}),
      ...(inboxPrefix ? { inboxPrefix } : {}),
    });
    const client: Client = { nc, errors: [] };
    void (async () => {
      for await (const s of nc.status())
        if (s.type === 'error') client.errors.push(String((s as { error?: unknown }).error));
    })();
    clients.push(client);
    return client;
  };
  const collect = (c: Client, subject: string): string[] => {
    const got: string[] = [];
    c.nc.subscribe(subject, {
      callback: (error, m) => {
        // A refused subscription is closed with the server's error (also seen in `errors`).
        if (error) return;
        got.push(`${m.subject} ${m.string()}`);
      },
    });
    return got;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-nats-auth-'));
    await copyFile(join(REPO, 'deploy/nats/gpunet.conf'), join(dir, 'gpunet.conf'));
    await writeFile(
      join(dir, 'auth.conf'),
      renderNatsAuth({
        services: { discovery: discoveryKey.getPublicKey(), scheduler: schedulerKey.getPublicKey() },
        edges: [A, B],
        // startNatsServer waits for an unauthenticated connection to succeed; that client can do nothing.
        probeUser: true,
      }),
    );
    // -a/-p/-sd given by startNatsServer override the file's listen address and store directory.
    server = await startNatsServer({ args: ['-c', join(dir, 'gpunet.conf')] });
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.nc.close().catch(() => undefined);
    await server?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("edge A cannot publish edge B's heartbeat; its own goes through", async () => {
    const discovery = await connectAs(discoveryKey);
    const heard = collect(discovery, 'edge.*.heartbeat.v1');
    await discovery.nc.flush();
    const a = await connectAs(edgeA, `_INBOX_${A}`);
    a.nc.publish(`edge.${B}.heartbeat.v1`, 'forged');
    a.nc.publish(`edge.${A}.heartbeat.v1`, 'mine');
    await a.nc.flush();
    await waitFor(() => heard.length > 0, { description: "A's own heartbeat" });
    await discovery.nc.flush();
    expect(heard).toEqual([`edge.${A}.heartbeat.v1 mine`]);
    await waitFor(
      () => a.errors.some((e) => e.includes(`Permissions Violation for Publish to "edge.${B}.heartbeat.v1"`)),
      {
        description: 'the server to refuse the forged heartbeat',
      },
    );
  });

  it("edge A cannot read edge B's commands, anyone's inbox or other edges' reports", async () => {
    const a = await connectAs(edgeA, `_INBOX_${A}`);
    const b = await connectAs(edgeB, `_INBOX_${B}`);
    const stolen = collect(a, `cmd.edge.${B}.>`);
    const inbox = collect(a, '_INBOX.>');
    const othersInbox = collect(a, `_INBOX_${B}.>`);
    const reports = collect(a, 'edge.>');
    const delivered = collect(b, `cmd.edge.${B}.>`);
    await a.nc.flush();
    await b.nc.flush();
    const scheduler = await connectAs(schedulerKey);
    scheduler.nc.publish(`cmd.edge.${B}.reserve.v1`, 'for B');
    await scheduler.nc.flush();
    await waitFor(() => delivered.length === 1, { description: 'B to get its command' });
    await a.nc.flush();
    expect(stolen).toEqual([]);
    expect(inbox).toEqual([]);
    expect(othersInbox).toEqual([]);
    expect(reports).toEqual([]);
    await waitFor(
      () =>
        [`cmd.edge.${B}.>`, '_INBOX.>', `_INBOX_${B}.>`, 'edge.>'].every((s) =>
          a.errors.some((e) => e.includes(`Permissions Violation for Subscription to "${s}"`)),
        ),
      { description: 'the server to refuse every subscription' },
    );
  });

  it('edges cannot command edges, speak for discovery or use the JetStream API', async () => {
    const a = await connectAs(edgeA, `_INBOX_${A}`);
    for (const subject of [
      `cmd.edge.${B}.reserve.v1`,
      'discovery.provider.online.v1',
      '$JS.API.STREAM.DELETE.EDGE',
      'q.discovery.candidates.v1',
    ])
      a.nc.publish(subject, 'x');
    await a.nc.flush();
    await waitFor(() => a.errors.filter((e) => e.includes('Permissions Violation for Publish')).length >= 4, {
      description: 'four refusals',
    });
  });

  it('refuses unknown keys; unauthenticated clients may do nothing', async () => {
    await expect(
      connect({
        servers: server.url,
        reconnect: false,
        authenticator: nkeyAuthenticator(createUser().getSeed()),
      }),
    ).rejects.toThrow(/Authorization Violation/i);
    const anonymous = await connectAs(null);
    anonymous.nc.publish(`edge.${A}.heartbeat.v1`, 'x');
    await anonymous.nc.flush();
    await waitFor(() => anonymous.errors.some((e) => e.includes('Permissions Violation')), {
      description: 'refusal',
    });
  });

  describe('the services and an edge work within these permissions', () => {
    let d: DiscoveryUnderTest;
    let edge: EdgeProcess;

    beforeAll(async () => {
      d = await startDiscovery('secure', { natsUrl: server.url, natsSeed: seedOf(discoveryKey), prefix: '' });
      edge = await startEdgeProcess({
        name: 'secure-edge',
        inventory:
          'gpus: [{ model: NVIDIA L4, vram: 24GiB, compute_capability: "8.9", count: 2 }]\nhost: { cpu_cores: 16, memory: 64GiB }',
        nats: server.url,
        prefix: '',
        seed: seedOf(edgeA),
      });
    }, 120_000);

    afterAll(async () => {
      if (edge) await removeEdge(edge);
      await d?.close();
    }, 60_000);

    it('registers the edge, answers the scheduler, and lets the edge answer reservations', async () => {
      expect(edge.edgeId).toBe(A);
      const scheduler = await connectAs(schedulerKey);
      const found = await waitFor(
        async () => {
          const r = await askQuery(
            scheduler.nc,
            FindCandidates,
            { gpu: gpuRequirement('{ count: 2 }') },
            { timeoutMs: 5_000 },
          );
          return r.items.length === 1 ? r.items : undefined;
        },
        { description: 'the edge to be offered', timeoutMs: 30_000 },
      );
      expect(found[0]?.providerId).toBe(A);
      const envelope = buildEnvelope(
        ReserveOnEdge,
        {
          reservationId: 'r-secure',
          jobId: 'j',
          gpuUuids: ['SIM-nvidia-0'],
          cpuMillicores: 1000,
          memoryBytes: 2 ** 30,
          image: 'nvcr.io/nvidia/pytorch:24.05-py3',
          maxDurationMs: 60_000,
          subnet: 'public',
          asset: 'USDC',
          pricePerGpuHourMinor: '1000000',
          holdUntil: new Date(Date.now() + 60_000).toISOString(),
        },
        { streamId: 'job-j' },
      );
      const reply: Msg = await scheduler.nc.request(
        ReserveOnEdge.subject({ edgeId: A }),
        JSON.stringify(envelope),
        { timeout: 10_000 },
      );
      expect(ReservationReplySchema.parse(reply.json())).toEqual({
        reservationId: 'r-secure',
        outcome: 'accepted',
        reasons: [],
      });
      expect(d.errors).toEqual([]);
      expect(edge.logs()).not.toContain('Permissions Violation');
    });
  });
});
