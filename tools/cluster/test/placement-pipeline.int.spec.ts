import { type PayloadOf, type JobPlaced } from '@gpunet/contracts';
import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedEdge, startSimulatedEdge } from '../src';
import {
  type ClusterUnderTest,
  NATS_URL,
  openEconomy,
  rtxHost,
  startCluster,
  submitJob,
  SUBNET,
  providersOnline,
} from './support/cluster-fixture';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/*
 * The control plane as separate processes (settlement, discovery, scheduler, each from its main.ts)
 * with two real provider-edge processes: a job submitted the way the gateway submits it is funded
 * in escrow, and its 4-GPU gang is reserved all-or-nothing across both providers.
 */
describe('placement pipeline: settlement → discovery → scheduler → edges (processes)', () => {
  let c: ClusterUnderTest;
  const edges: SimulatedEdge[] = [];

  beforeAll(async () => {
    c = await startCluster('pipeline', ['settlement', 'discovery', 'scheduler']);
    for (const name of ['alpha', 'beta'])
      edges.push(
        await startSimulatedEdge({
          name,
          inventory: rtxHost(name),
          subnets: [SUBNET],
          natsUrl: NATS_URL,
          prefix: c.nats.prefix,
        }),
      );
    await openEconomy(
      c,
      'tenant-a',
      edges.map((e) => e.edgeId),
    );
  }, 240_000);

  afterAll(async () => {
    for (const e of edges) await e.remove();
    await c?.close();
  }, 120_000);

  it('funds the job and places its 4 ranks on both providers, 2 GPUs each', async () => {
    const parsed = parseEnsembleSpec(
      readFileSync(join(ROOT, 'docs/examples/15-multi-provider-ddp.yaml'), 'utf8'),
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    // Both edges are known to discovery before the job arrives.
    await providersOnline(
      c,
      edges.map((e) => e.edgeId),
    );
    await submitJob(c, { jobId: 'job-pipe-1', tenantId: 'tenant-a', spec: parsed.spec, gpus: 4 });
    await c.events.waitFor((e) => e.type === 'job.funded', { timeoutMs: 60_000 });
    const placed = await c.events
      .waitFor((e) => e.type === 'job.placed' || e.type === 'job.unschedulable', { timeoutMs: 90_000 })
      .catch((error: unknown) => {
        // Say why: the scheduler's queue reasons and the last lines of every process involved.
        const queued = c.events.items.filter((e) => e.type === 'job.queued').map((e) => e.data);
        const tails = [c.cluster.service('scheduler'), ...edges.map((e) => e.process)].map(
          (p) => `--- ${p.name}\n${p.output.split('\n').slice(-15).join('\n')}`,
        );
        throw new Error(`no placement decision; queued: ${JSON.stringify(queued)}\n${tails.join('\n')}`, {
          cause: error,
        });
      });
    expect(placed.type, JSON.stringify(placed.data)).toBe('job.placed');
    const data = placed.data as PayloadOf<typeof JobPlaced>;
    const nodes = data.allocations.flatMap((a) => a.nodes);
    expect(nodes.map((n) => n.providerId).sort()).toEqual(edges.map((e) => e.edgeId).sort());
    expect(nodes.map((n) => n.gpuUuids.length)).toEqual([2, 2]);
    expect(data.tenantId).toBe('tenant-a');
  }, 180_000);
});
