import { AttachOverlay, buildEnvelope, DetachOverlay, providerStreams } from '@gpunet/contracts';
import { ensureStreams } from '@gpunet/eventing';
import { type NatsTestContext, useNats } from '@gpunet/testing';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent } from '../src/app/edge-agent';
import { detect } from '../src/infra/detect/detector';
import { createIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { FIXTURES } from './support/fixtures';

const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
const POLICY = `version: 1
name: overlay-test
gpus: { share: all, max_per_job: 2 }
cpu: { reserve_cores: 0 }
memory: { reserve: 0GiB }
images: { allow: ['nvcr.io/nvidia/'] }
pricing: { asset: USDC, default_per_gpu_hour: '0.40' }
subnets: [public]
jobs: { max_duration: 1h }
`;

/*
 * The overlay agent mounted on the edge's own NATS connection: it answers the edge's overlay
 * commands while the edge runs (validation and idempotent detach need no root), not when the edge
 * runs without overlays, and no longer once the edge stopped. Attaching for real (namespaces,
 * WireGuard) is the e2e tier's: tools/cluster/test/multi-provider-job-overlay.e2e.spec.ts.
 */
describe('the edge mounts the job overlay agent', () => {
  let nats: NatsTestContext;
  const dirs: string[] = [];
  const agents: EdgeAgent[] = [];

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_overlay' });
    await ensureStreams(await nats.jsm(), [...providerStreams], nats.prefix);
  }, 30_000);

  afterAll(async () => {
    for (const a of agents) await a.stop({ flushTimeoutMs: 500 }).catch(() => undefined);
    await nats?.cleanup();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }, 60_000);

  const startEdge = async (overlay: boolean): Promise<EdgeAgent> => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-overlay-'));
    dirs.push(dir);
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    const agent = new EdgeAgent({
      identity: await createIdentity(dir),
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      detect: () => detect({ workDir: dir, simulate: H100 }),
      nats: { servers: nats.servers, prefix: nats.prefix },
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 2_000,
      random: () => 0.5,
      ranks: { enabled: false },
      overlay: { enabled: overlay, netnsPrefix: `t${process.pid}` },
    });
    agents.push(agent);
    await agent.start();
    return agent;
  };

  const attach = (edgeId: string, networkCidr: string) => {
    const envelope = buildEnvelope(
      AttachOverlay,
      { jobId: 'job-overlay-int', networkCidr: '100.96.9.0/24', address: '100.96.9.1', relays: [] },
      { streamId: 'job-overlay-int' },
    );
    return nats.nc.request(
      AttachOverlay.subject({ edgeId }, nats.prefix),
      JSON.stringify({ ...envelope, data: { ...envelope.data, networkCidr } }),
      { timeout: 10_000 },
    );
  };

  it('answers overlay commands on the edge connection: a malformed attach names the field, detach is idempotent', async () => {
    const edge = await startEdge(true);
    expect(edge.overlays).toBeDefined();
    const reply = (await attach(edge.edgeId, '100.96.9.0/33')).json<{ outcome: string; reason?: string }>();
    expect(reply.outcome).toBe('failed');
    expect(reply.reason).toMatch(/data\.networkCidr/);
    const detach = buildEnvelope(DetachOverlay, { jobId: 'job-never-attached' }, { streamId: 'job-x' });
    const detached = await nats.nc.request(
      DetachOverlay.subject({ edgeId: edge.edgeId }, nats.prefix),
      JSON.stringify(detach),
      { timeout: 10_000 },
    );
    expect(detached.json()).toMatchObject({ outcome: 'detached' });
    expect(edge.overlays!.netnsFor('job-never-attached')).toBeNull();

    // Stopped with the edge: nobody answers any more.
    await edge.stop({ flushTimeoutMs: 500 });
    await expect(attach(edge.edgeId, '100.96.9.0/24')).rejects.toThrow();
  });

  it('is not mounted when the edge runs without overlays', async () => {
    const edge = await startEdge(false);
    expect(edge.overlays).toBeUndefined();
    await expect(attach(edge.edgeId, '100.96.9.0/24')).rejects.toThrow();
  });
});
