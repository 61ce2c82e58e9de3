import { requireTestbed, run } from '@gpunet/netns-testbed';
import { rankNetnsName } from '@gpunet/overlay';
import { waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  exampleSpec,
  type OverlayCluster,
  ROOT,
  runDdpJobThroughOverlay,
  startOverlayCluster,
} from './support/overlay-cluster';

const SPEC = 'docs/examples/15-multi-provider-ddp.yaml';
const JOB = 'job-e2e-ddp-overlay';

/*
 * The multi-provider end-to-end job through the job overlay: the same two simulated providers and the same
 * 4-rank DDP example, but each edge sits behind its own symmetric NAT (no direct path between them
 * can be punched) with a relay in public. Execution runs with EXECUTION_NETWORK=overlay: before the
 * ranks start it has both edges attach the job's WireGuard network (`gpunet0` in a rank namespace
 * each edge creates), connect through the relay, and publishes the job's path report; the ranks run
 * in those namespaces (process runtime) and rendezvous at rank 0's overlay address. The same job in
 * containers: containerized-job.e2e.spec.ts.
 */
const ok = await requireTestbed('multi-provider job over the overlay (end to end)', ['wireguard-go']);

describe.skipIf(!ok)('a multi-provider job through the job overlay, edges behind symmetric NATs', () => {
  let oc: OverlayCluster;

  beforeAll(async () => {
    oc = await startOverlayCluster('f7e2e', { tenantId: 'tenant-f7', edgeArgs: ['--job-files', ROOT] });
  }, 300_000);

  afterAll(async () => {
    await oc?.close();
    for (const p of oc?.netnsPrefixes ?? [])
      await run(['ip', 'netns', 'del', rankNetnsName(JOB, p)], { allowFailure: true });
  }, 120_000);

  it('prepares the overlay (relayed: both NATs symmetric), trains 4 ranks over it, meters and settles', async () => {
    await runDdpJobThroughOverlay(oc, { jobId: JOB, tenantId: 'tenant-f7', spec: exampleSpec(SPEC) });

    // At the job's end execution detached both edges: their rank namespaces are gone.
    await waitFor(
      async () => {
        const { stdout } = await run(['ip', 'netns', 'list']);
        return oc.netnsPrefixes.every((p) => !stdout.includes(rankNetnsName(JOB, p)));
      },
      { timeoutMs: 60_000, description: "the job's rank namespaces removed" },
    );
  }, 420_000);
});
