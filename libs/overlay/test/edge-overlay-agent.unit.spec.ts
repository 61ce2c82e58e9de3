import {
  AttachOverlay,
  buildEnvelope,
  ConnectOverlayPeers,
  DetachOverlay,
  type InputOf,
  OverlayAttachReplySchema,
  OverlayConnectReplySchema,
} from '@gpunet/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  EdgeOverlayAgent,
  generateKeyPair,
  type OverlayCommandKind,
  OverlayDetachReplySchema,
  rankNetnsName,
} from '../src';
import { FakeRuntime, gate } from './support/fake-runtime';

const EDGE = `U${'A'.repeat(55)}`;
const JOB = 'job-1';
const RELAY = { relayId: 'relay-1', host: '203.0.113.10', port: 8443, stunPorts: [3478, 3479] };

const attachData = (
  overrides: Partial<InputOf<typeof AttachOverlay>> = {},
): InputOf<typeof AttachOverlay> => ({
  jobId: JOB,
  networkCidr: '100.96.3.0/24',
  address: '100.96.3.1',
  relays: [RELAY],
  ...overrides,
});
const peer = (address: string) => ({
  edgeId: null,
  publicKey: generateKeyPair().publicKey,
  address,
  candidates: [{ kind: 'host' as const, endpoint: '192.168.11.2:40000' }],
});
const connectData = (jobId = JOB): InputOf<typeof ConnectOverlayPeers> => ({
  jobId,
  peers: [peer('100.96.3.1'), peer('100.96.3.2')],
  admissionToken: 'gpa1.token',
});

const envelope = (
  def: typeof AttachOverlay | typeof ConnectOverlayPeers | typeof DetachOverlay,
  data: unknown,
) => JSON.stringify(buildEnvelope(def, data as never, { streamId: 'job-test' }));
const attach = (data: Partial<InputOf<typeof AttachOverlay>> = {}) =>
  envelope(AttachOverlay, attachData(data));
const connect = (jobId = JOB) => envelope(ConnectOverlayPeers, connectData(jobId));
const detach = (jobId = JOB) => envelope(DetachOverlay, { jobId });

/** A valid envelope of `def` with its payload's field `field` replaced (or removed, for `undefined`). */
const withField = (
  def: typeof AttachOverlay | typeof ConnectOverlayPeers | typeof DetachOverlay,
  data: unknown,
  field: string,
  value: unknown,
) => {
  const env = buildEnvelope(def, data as never, { streamId: 'job-test' }) as unknown as {
    data: Record<string, unknown>;
  };
  const copy = { ...env, data: { ...env.data } };
  if (value === undefined) delete copy.data[field];
  else copy.data[field] = value;
  return JSON.stringify(copy);
};

const replySchemas = {
  attach: OverlayAttachReplySchema,
  connect: OverlayConnectReplySchema,
  detach: OverlayDetachReplySchema,
} as const;

describe('EdgeOverlayAgent', () => {
  let runtime: FakeRuntime;
  let agent: EdgeOverlayAgent;

  beforeEach(() => {
    runtime = new FakeRuntime();
    agent = new EdgeOverlayAgent({
      nc: {} as NatsConnection, // handle() never touches the connection
      edgeId: EDGE,
      netnsPrefix: 'test',
      connect: { windowMs: 1_234 },
      attach: { stunTimeoutMs: 500 },
      runtime,
    });
  });

  describe('attach', () => {
    it('creates the rank namespace, attaches the overlay into it and replies the endpoint', async () => {
      const reply = await agent.handle('attach', attach());
      const overlay = runtime.overlayOf(JOB)!;
      expect(reply).toEqual({ outcome: 'attached', endpoint: overlay.endpoint });
      const netns = rankNetnsName(JOB, 'test');
      expect(netns).toMatch(/^test-[0-9a-f]{12}$/);
      expect(agent.netnsFor(JOB)).toBe(netns);
      expect(runtime.namespaces).toEqual(new Set([netns]));
      expect(overlay.options).toMatchObject({
        jobId: JOB,
        networkCidr: '100.96.3.0/24',
        address: '100.96.3.1',
        relays: [{ ...RELAY, tls: false }],
        rankNetns: { name: netns },
        mtu: 1420,
        stunTimeoutMs: 500,
      });
      expect(runtime.calls).toEqual([`create ${netns}`, `attach ${JOB}`, `attached ${JOB}`]);
    });

    it('answers a repeated attach (a retry after a lost reply) with the same endpoint, attaching once', async () => {
      const first = await agent.handle('attach', attach());
      expect(await agent.handle('attach', attach())).toEqual(first);
      expect(runtime.overlays).toHaveLength(1);
    });

    it('refuses an attach of the same job with another address', async () => {
      await agent.handle('attach', attach());
      const reply = await agent.handle('attach', attach({ address: '100.96.3.9' }));
      expect(reply).toMatchObject({
        outcome: 'failed',
        reason: expect.stringMatching(/already attached .* 100\.96\.3\.1/),
      });
    });

    it('fails with the reason when the host cannot run overlays, creating nothing', async () => {
      runtime.unavailableReason = 'job overlays need CAP_NET_ADMIN (run the edge as root)';
      expect(await agent.handle('attach', attach())).toEqual({
        outcome: 'failed',
        reason: 'job overlays need CAP_NET_ADMIN (run the edge as root)',
      });
      expect(runtime.calls).toEqual([]);
      expect(agent.netnsFor(JOB)).toBeNull();
    });

    it('removes the namespace again when the overlay fails to attach', async () => {
      runtime.attachError = new Error('wireguard-go exited');
      const reply = await agent.handle('attach', attach());
      expect(reply).toMatchObject({
        outcome: 'failed',
        reason: expect.stringContaining('wireguard-go exited'),
      });
      expect(runtime.namespaces.size).toBe(0);
      expect(agent.netnsFor(JOB)).toBeNull();
    });
  });

  describe('connect', () => {
    it('fails for a job that is not attached', async () => {
      expect(await agent.handle('connect', connect())).toMatchObject({
        outcome: 'failed',
        reason: expect.stringMatching(/not attached/),
      });
    });

    it('connects with the admission token and the edge settings, and replies the path report', async () => {
      await agent.handle('attach', attach());
      const reply = await agent.handle('connect', connect());
      const overlay = runtime.overlayOf(JOB)!;
      expect(overlay.connects).toHaveLength(1);
      expect(overlay.connects[0]!.options).toEqual({ windowMs: 1_234, admissionToken: 'gpa1.token' });
      expect(reply).toMatchObject({ outcome: 'connected', report: { jobId: JOB, address: '100.96.3.1' } });
      // A repeat answers the current report without connecting again.
      expect(await agent.handle('connect', connect())).toMatchObject({ outcome: 'connected' });
      expect(overlay.connects).toHaveLength(1);
    });

    it('replies failed when connecting throws, and stays attached', async () => {
      await agent.handle('attach', attach());
      runtime.overlayOf(JOB)!.connectError = new Error('relay refused the token');
      expect(await agent.handle('connect', connect())).toMatchObject({
        outcome: 'failed',
        reason: expect.stringContaining('relay refused the token'),
      });
      expect(agent.netnsFor(JOB)).not.toBeNull();
    });
  });

  describe('detach', () => {
    it('detaches the overlay and deletes the namespace; a repeat is a no-op that succeeds', async () => {
      await agent.handle('attach', attach());
      expect(await agent.handle('detach', detach())).toEqual({ outcome: 'detached' });
      expect(runtime.overlayOf(JOB)!.detached).toBe(1);
      expect(runtime.namespaces.size).toBe(0);
      expect(agent.netnsFor(JOB)).toBeNull();
      expect(await agent.handle('detach', detach())).toEqual({ outcome: 'detached' });
      expect(runtime.overlayOf(JOB)!.detached).toBe(1);
    });

    it('deletes a namespace left by an earlier run for a job it does not know', async () => {
      runtime.namespaces.add(rankNetnsName('job-old', 'test'));
      expect(await agent.handle('detach', detach('job-old'))).toEqual({ outcome: 'detached' });
      expect(runtime.namespaces.size).toBe(0);
    });
  });

  describe('validation: a malformed command is answered failed, naming the field', () => {
    const connectBase = connectData();
    it.each<{ name: string; kind: OverlayCommandKind; raw: () => string; reason: RegExp }>([
      { name: 'not JSON', kind: 'attach', raw: () => '{"jobId":', reason: /not JSON/ },
      {
        name: 'a bare payload, no envelope',
        kind: 'attach',
        raw: () => JSON.stringify(attachData()),
        reason: /type|eventId/,
      },
      {
        name: 'another command on this subject',
        kind: 'attach',
        raw: () => detach(),
        reason: /unknown message type edge\.detach-overlay/,
      },
      {
        name: 'a network with a bad prefix',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'networkCidr', '100.96.3.0/33'),
        reason: /data\.networkCidr/,
      },
      {
        name: 'an address that is not IPv4',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'address', '100.96.3'),
        reason: /data\.address/,
      },
      {
        name: 'a job id with a dot',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'jobId', 'job.1'),
        reason: /data\.jobId/,
      },
      {
        name: 'a relay port of 0',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'relays', [{ ...RELAY, port: 0 }]),
        reason: /data\.relays\[0\]\.port/,
      },
      {
        name: 'an MTU under 1280',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'mtu', 576),
        reason: /data\.mtu/,
      },
      {
        name: 'an unknown field',
        kind: 'attach',
        raw: () => withField(AttachOverlay, attachData(), 'privateKey', 'x'),
        reason: /privateKey/,
      },
      {
        name: 'a peer key that is not a WireGuard key',
        kind: 'connect',
        raw: () =>
          withField(ConnectOverlayPeers, connectBase, 'peers', [
            { ...connectBase.peers[0]!, publicKey: 'abc' },
          ]),
        reason: /data\.peers\[0\]\.publicKey/,
      },
      {
        name: 'an empty admission token',
        kind: 'connect',
        raw: () => withField(ConnectOverlayPeers, connectBase, 'admissionToken', ''),
        reason: /data\.admissionToken/,
      },
      {
        name: 'a candidate endpoint without a port',
        kind: 'connect',
        raw: () =>
          withField(ConnectOverlayPeers, connectBase, 'peers', [
            { ...connectBase.peers[0]!, candidates: [{ kind: 'host', endpoint: '10.0.0.1' }] },
          ]),
        reason: /data\.peers\[0\]\.candidates\[0\]\.endpoint/,
      },
      {
        name: 'no job id',
        kind: 'detach',
        raw: () => withField(DetachOverlay, { jobId: JOB }, 'jobId', undefined),
        reason: /data\.jobId/,
      },
    ])('$kind: $name', async ({ kind, raw, reason }) => {
      const reply = await agent.handle(kind, raw());
      expect(reply.outcome).toBe('failed');
      expect(reply.outcome === 'failed' ? reply.reason : '').toMatch(reason);
      expect(runtime.calls).toEqual([]);
    });
  });

  describe('concurrency', () => {
    it("runs one job's commands in arrival order, and other jobs meanwhile", async () => {
      const held = gate();
      runtime.attachGates.set(JOB, held.opened);
      const attaching = agent.handle('attach', attach());
      const connecting = agent.handle('connect', connect());
      // Another job attaches and connects while job-1's attach is held.
      expect(await agent.handle('attach', attach({ jobId: 'job-2', address: '100.96.3.2' }))).toMatchObject({
        outcome: 'attached',
      });
      expect(await agent.handle('connect', connect('job-2'))).toMatchObject({ outcome: 'connected' });
      held.open();
      // job-1's connect waited for its attach instead of failing "not attached".
      expect(await attaching).toMatchObject({ outcome: 'attached' });
      expect(await connecting).toMatchObject({ outcome: 'connected' });
      expect(runtime.calls.indexOf(`attached ${JOB}`)).toBeGreaterThan(
        runtime.calls.indexOf('attached job-2'),
      );
    });

    it('a detach sent while connect runs waits for it, then removes everything', async () => {
      await agent.handle('attach', attach());
      const held = gate();
      runtime.overlayOf(JOB)!.connectGate = held.opened;
      const connecting = agent.handle('connect', connect());
      const detaching = agent.handle('detach', detach());
      held.open();
      expect(await connecting).toMatchObject({ outcome: 'connected' });
      expect(await detaching).toEqual({ outcome: 'detached' });
      expect(runtime.namespaces.size).toBe(0);
    });
  });

  it('stop() detaches every job and answers later commands failed', async () => {
    await agent.handle('attach', attach());
    await agent.handle('attach', attach({ jobId: 'job-2', address: '100.96.3.2' }));
    await agent.stop();
    expect(runtime.overlays.map((o) => o.detached)).toEqual([1, 1]);
    expect(runtime.namespaces.size).toBe(0);
    expect(agent.jobIds).toEqual([]);
    expect(await agent.handle('attach', attach())).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/stopping/),
    });
  });

  it('stop() lets an attach in progress finish, then detaches it too', async () => {
    const held = gate();
    runtime.attachGates.set(JOB, held.opened);
    const attaching = agent.handle('attach', attach());
    const stopping = agent.stop();
    held.open();
    expect(await attaching).toMatchObject({ outcome: 'attached' });
    await stopping;
    expect(runtime.overlayOf(JOB)!.detached).toBe(1);
    expect(runtime.namespaces.size).toBe(0);
  });

  it("attaches into the namespace the edge provides (a Docker sandbox's, by pid) and releases it on detach", async () => {
    const released: string[] = [];
    const docker = new EdgeOverlayAgent({
      nc: {} as NatsConnection,
      edgeId: EDGE,
      runtime,
      rankNamespaces: {
        acquire: (jobId) => Promise.resolve({ pid: jobId === JOB ? 4242 : 1 }),
        release: (jobId) => {
          released.push(jobId);
          return Promise.resolve();
        },
      },
    });
    expect(await docker.handle('attach', attach())).toMatchObject({ outcome: 'attached' });
    expect(runtime.overlayOf(JOB)!.options.rankNetns).toEqual({ pid: 4242 });
    expect(docker.rankNetnsFor(JOB)).toEqual({ pid: 4242 });
    expect(docker.netnsFor(JOB)).toBeNull();
    expect(runtime.namespaces.size).toBe(0);
    expect(await docker.handle('detach', detach())).toEqual({ outcome: 'detached' });
    expect(released).toEqual([JOB]);
  });

  it('rejects a netns prefix that would not make a valid name', () => {
    expect(
      () => new EdgeOverlayAgent({ nc: {} as NatsConnection, edgeId: EDGE, netnsPrefix: 'a/b', runtime }),
    ).toThrow(/netnsPrefix/);
  });

  describe('fuzz: any bytes on any subject get a reply of the command reply contract', () => {
    const kinds = fc.constantFrom<OverlayCommandKind>('attach', 'connect', 'detach');
    const valid = { attach: attach(), connect: connect(), detach: detach() };

    it('random bytes and random JSON', async () => {
      await fc.assert(
        fc.asyncProperty(
          kinds,
          fc.oneof(
            fc.uint8Array({ maxLength: 256 }),
            fc.json().map((j) => j),
            fc.jsonValue().map((v) => JSON.stringify({ type: 'edge.attach-overlay', version: 1, data: v })),
          ),
          async (kind, data) => {
            const reply = await agent.handle(kind, data);
            expect(replySchemas[kind].safeParse(reply).success).toBe(true);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('valid envelopes with one payload field replaced by anything', async () => {
      await fc.assert(
        fc.asyncProperty(kinds, fc.string({ maxLength: 20 }), fc.jsonValue(), async (kind, field, value) => {
          const env = JSON.parse(valid[kind]) as { data: Record<string, unknown> };
          const keys = Object.keys(env.data);
          const key = keys.includes(field) || field === '' ? keys[field.length % keys.length]! : field;
          env.data[key] = value;
          const reply = await agent.handle(kind, JSON.stringify(env));
          expect(replySchemas[kind].safeParse(reply).success).toBe(true);
        }),
        { numRuns: 300 },
      );
      // Whatever was attached along the way is detached cleanly.
      await agent.stop();
      expect(runtime.namespaces.size).toBe(0);
    });
  });
});
