import {
  EdgeInventoryReported,
  EdgeRegistered,
  namespacedStream,
  providerStreams,
  EdgeStream,
  signingInput,
  type MessageDefinition,
  EdgeHeartbeat,
} from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { FakeClock, startNatsServer, type NatsServerProcess, testNamespace, waitFor } from '@gpunet/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { fromPublic } from '@nats-io/nkeys';
import { connect } from '@nats-io/transport-node';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent, PolicyRejectedError } from '../src/app/edge-agent';
import { type EdgeCliIo, runEdgeCli } from '../src/app/edge-cli';
import { detect, type Detection } from '../src/infra/detect/detector';
import { createIdentity, IdentityError, loadIdentity } from '../src/infra/identity.store';
import { initialState, StateFileError, StateStore } from '../src/infra/state.store';
import { FIXTURES, fixture } from './support/fixtures';

const POLICY = fixture('policy', 'lab.policy.yaml').replace(/share: \[.*\]/, 'share: all');
const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');

const tempDir = () => mkdtemp(join(tmpdir(), 'gpunet-edge-test-'));

describe('identity and local state on disk', () => {
  it('creates the key pair once, 0600 in a 0700 directory, and refuses an unsafe one', async () => {
    const dir = join(await tempDir(), 'edge');
    const identity = await createIdentity(dir);
    expect(identity.edgeId).toMatch(/^U[A-Z2-7]{55}$/);
    expect((await stat(join(dir, 'edge.nk'))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await expect(createIdentity(dir)).rejects.toMatchObject({ code: 'IDENTITY_EXISTS' });
    expect((await loadIdentity(dir)).edgeId).toBe(identity.edgeId);
    // What the edge signs, the nkeys library (and so any NATS tool) verifies.
    const text = signingInput(EdgeRegistered, { a: 1, edgeId: identity.edgeId });
    expect(
      fromPublic(identity.edgeId).verify(
        new TextEncoder().encode(text),
        Buffer.from(identity.sign(text), 'base64url'),
      ),
    ).toBe(true);
    await chmod(join(dir, 'edge.nk'), 0o644);
    await expect(loadIdentity(dir)).rejects.toBeInstanceOf(IdentityError);
    await expect(loadIdentity(dir)).rejects.toMatchObject({ code: 'IDENTITY_UNSAFE' });
    await expect(loadIdentity(join(dir, 'nope'))).rejects.toMatchObject({ code: 'IDENTITY_MISSING' });
  });

  it("writes state atomically (0600, no temporary files left) and refuses another edge's state", async () => {
    const dir = await tempDir();
    const store = StateStore.in(dir);
    expect(await store.load('U1')).toEqual(initialState('U1'));
    await store.save({ ...initialState('U1'), sequence: 42 });
    await store.save({ ...initialState('U1'), sequence: 43 });
    expect((await store.load('U1')).sequence).toBe(43);
    expect(await readdir(dir)).toEqual(['state.json']);
    expect((await stat(join(dir, 'state.json'))).mode & 0o777).toBe(0o600);
    await expect(store.load('U2')).rejects.toBeInstanceOf(StateFileError);
    await writeFile(join(dir, 'state.json'), '{"version": 1');
    await expect(store.load('U1')).rejects.toBeInstanceOf(StateFileError);
  });
});

describe('the edge agent against a NATS server it can lose', () => {
  let server: NatsServerProcess;
  const prefix = testNamespace('edge');

  beforeAll(async () => {
    server = await startNatsServer();
    const nc = await connect({ servers: server.url });
    await ensureStreams(await jetstreamManager(nc), providerStreams, prefix);
    await nc.close();
  }, 30_000);
  afterAll(async () => {
    await server?.dispose();
  });

  const logs: string[] = [];
  const agentIn = async (
    dir: string,
    options: { policy?: string; detect?: () => Promise<Detection> } = {},
  ) => {
    const identity = await createIdentity(dir);
    await writeFile(join(dir, 'policy.yaml'), options.policy ?? POLICY);
    return new EdgeAgent({
      identity,
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      detect: options.detect ?? (() => detect({ workDir: dir, simulate: H100 })),
      nats: { servers: server.url, prefix },
      clock: new FakeClock('2030-01-01T21:00:00.000Z'),
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 1_000,
      random: () => 0.5,
      log: (level, msg, fields) => logs.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    });
  };

  const streamMessages = async (subject: string) => {
    const nc = await connect({ servers: server.url });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(namespacedStream(EdgeStream, prefix).name, {
        subjects_filter: subject,
      });
      return info.state.subjects?.[subject] ?? 0;
    } finally {
      await nc.close();
    }
  };

  it('rejects a malformed policy at start with field paths, before connecting', async () => {
    const agent = await agentIn(await tempDir(), { policy: fixture('policy', 'malformed.policy.yaml') });
    const error = await agent.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyRejectedError);
    expect((error as PolicyRejectedError).issues.map((i) => i.path)).toContain(
      'pricing.floors[0].per_gpu_hour',
    );
    expect((error as Error).message).toContain('gpus.max_per_job');
  });

  it('refuses a policy that shares GPUs the host does not have', async () => {
    const agent = await agentIn(await tempDir(), { policy: POLICY.replace('share: all', 'share: [0, 9]') });
    await expect(agent.start()).rejects.toMatchObject({ issues: [{ path: 'gpus.share[1]' }] });
  });

  it('registers signed, heartbeats, and delivers a report made during an outage after NATS returns', async () => {
    const dir = await tempDir();
    let gpus = 8;
    const agent = await agentIn(dir, {
      detect: async () => {
        const d = await detect({ workDir: dir, simulate: H100 });
        return { ...d, inventory: { ...d.inventory, gpus: d.inventory.gpus.slice(0, gpus) } };
      },
    });
    await agent.start();
    const registered = EdgeRegistered.subject({ edgeId: agent.edgeId }, prefix);
    await waitFor(async () => (await streamMessages(registered)) === 1, {
      description: 'the registration in the stream',
    });

    // The registration as stored verifies against the edge's key.
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    const stored = await jsm.streams.getMessage(namespacedStream(EdgeStream, prefix).name, {
      last_by_subj: registered,
    });
    const envelope = stored!.json<{
      data: Record<string, unknown> & { signature: string; inventory: { simulated: boolean } };
    }>();
    expect(envelope.data.inventory.simulated).toBe(true);
    expect(
      fromPublic(agent.edgeId).verify(
        new TextEncoder().encode(signingInput(EdgeRegistered as MessageDefinition, envelope.data)),
        Buffer.from(envelope.data.signature, 'base64url'),
      ),
    ).toBe(true);
    const beats: string[] = [];
    nc.subscribe(EdgeHeartbeat.subject({ edgeId: agent.edgeId }, prefix), {
      callback: (_e, m) => void beats.push(m.subject),
    });
    await nc.flush();
    agent.heartbeat();
    await waitFor(() => beats.length === 1, { description: 'a heartbeat' });
    await nc.close();

    await server.stop();
    gpus = 6; // two GPUs fell off the bus while NATS was down
    expect(await agent.rescan()).toBe(true);
    await waitFor(() => agent.pendingReports >= 1, { description: 'the report to wait for NATS' });
    await server.start();
    await agent.flushed();
    const reported = EdgeInventoryReported.subject({ edgeId: agent.edgeId }, prefix);
    expect(await streamMessages(reported)).toBe(1);
    expect(agent.pendingReports).toBe(0);
    expect(logs.some((l) => l.startsWith('info reconnected to NATS'))).toBe(true);
    await agent.stop();

    // The sequence survived in the state file.
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as {
      sequence: number;
      registeredAt: string;
    };
    expect(state.sequence).toBeGreaterThan(1);
    expect(state.registeredAt).toBe('2030-01-01T21:00:00.000Z');
    await rm(dir, { recursive: true, force: true });
  }, 60_000);
});

describe('provider-edge command line', () => {
  const io = (env: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const cli: EdgeCliIo = {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      env,
      untilStopped: () => Promise.resolve(),
      onReload: () => undefined,
    };
    return { cli, out, err };
  };

  it('init writes a key pair and a policy template; status reports them', async () => {
    const dir = join(await tempDir(), 'home');
    const a = io();
    expect(await runEdgeCli(['init', '--dir', dir], a.cli)).toBe(0);
    expect(a.out.join('')).toMatch(/edge id \(public nkey\): U[A-Z2-7]{55}/);
    const b = io();
    expect(await runEdgeCli(['status', '--dir', dir, '--simulate', H100, '--json'], b.cli)).toBe(0);
    const report = JSON.parse(b.out.join('')) as {
      simulated: boolean;
      gpus: { shared: boolean }[];
      policy: { valid: boolean };
    };
    expect(report).toMatchObject({ simulated: true, policy: { valid: true } });
    expect(report.gpus.filter((g) => g.shared)).toHaveLength(8);
  });

  it('status names the fields of a malformed policy and exits 1', async () => {
    const dir = join(await tempDir(), 'home');
    await runEdgeCli(['init', '--dir', dir], io().cli);
    await writeFile(join(dir, 'policy.yaml'), fixture('policy', 'malformed.policy.yaml'));
    const s = io();
    expect(await runEdgeCli(['status', '--dir', dir, '--simulate', H100], s.cli)).toBe(1);
    expect(s.out.join('')).toContain('pricing.floors[0].per_gpu_hour');
  });

  it('rejects bad arguments with usage (exit 2) and a bad inventory file with field paths (exit 1)', async () => {
    const u = io();
    expect(await runEdgeCli(['start', '--heartbeat', 'often'], u.cli)).toBe(2);
    expect(u.err.join('')).toContain('--heartbeat');
    expect(await runEdgeCli(['fly'], io().cli)).toBe(2);
    const r = io();
    expect(await runEdgeCli(['start', '--runtime', 'chroot'], r.cli)).toBe(2);
    expect(r.err.join('')).toContain('--runtime: docker, process or none');
    const g = io();
    expect(await runEdgeCli(['start', '--rank-grace', '10h'], g.cli)).toBe(2);
    expect(g.err.join('')).toContain('--rank-grace');
    const dir = join(await tempDir(), 'home');
    await runEdgeCli(['init', '--dir', dir], io().cli);
    await writeFile(join(dir, 'bad.yaml'), 'gpus: [{ model: X, vram: lots }]');
    const b = io();
    expect(await runEdgeCli(['status', '--dir', dir, '--simulate', join(dir, 'bad.yaml')], b.cli)).toBe(1);
    expect(b.err.join('')).toContain('gpus[0].vram');
  });
});
