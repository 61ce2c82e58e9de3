import { requireTestbed, run } from '@gpunet/netns-testbed';
import { requireDocker, waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleSpec,
  type OverlayCluster,
  runDdpJobThroughOverlay,
  startOverlayCluster,
} from './support/overlay-cluster';

const SPEC = 'docs/examples/16-containerized-ddp.yaml';
const IMAGE = 'gpunet/examples:torch-cpu';
const JOB = 'job-e2e-ddp-containers';

/*
 * The containerized end-to-end job: the multi-provider job's 4-rank DDP example in sandboxed
 * containers (the edges start with no `--runtime`: the default, the docker runtime) on the job overlay,
 * between two providers behind symmetric NATs and a relay. On each edge the job's network sandbox —
 * a container with no network — holds the namespace the overlay agent moves `gpunet0` into; both
 * rank containers of that edge join it, and nothing else: no bridge, no host network, no route but
 * the overlay. The job's code comes in its image (gpunet/examples:torch-cpu, built by
 * deploy/images/build-standins.sh).
 */
const ok =
  (await requireTestbed('containerized multi-provider job (end to end)', ['wireguard-go'])) &&
  (await requireDocker('containerized multi-provider job (end to end)'));
const imageBuilt =
  ok && (await run(['docker', 'image', 'inspect', IMAGE], { allowFailure: true })).status === 0;
if (ok && !imageBuilt)
  throw new Error(`${IMAGE} is not built: run deploy/images/ensure-docker.sh (it builds the offline images)`);

/** Containers of the job on this machine (ranks and sandboxes), as `docker ps` lists them. */
const jobContainers = async (): Promise<string[]> => {
  const { stdout } = await run([
    'docker',
    'ps',
    '-a',
    '--filter',
    `label=gpunet.job=${JOB}`,
    '--format',
    '{{.ID}}',
  ]);
  return stdout.split('\n').filter(Boolean);
};

/** The edge's JSON log records with this message, for this job. */
const logged = (output: string, msg: string): Record<string, unknown>[] =>
  output
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    })
    .filter((r) => r['msg'] === msg && r['jobId'] === JOB);

describe.skipIf(!ok)('a multi-provider job in sandboxed containers, through the job overlay', () => {
  let oc: OverlayCluster;

  beforeAll(async () => {
    oc = await startOverlayCluster('f10e2e', {
      tenantId: 'tenant-f10',
      edgeArgs: [],
      runtime: 'edge-default',
    });
  }, 300_000);

  afterAll(async () => {
    await oc?.close();
    for (const id of await jobContainers().catch(() => []))
      await run(['docker', 'rm', '-f', id], { allowFailure: true });
  }, 120_000);

  it('runs 4 DDP ranks as containers on two providers over the relayed overlay; meters, settles, leaves nothing', async () => {
    await runDdpJobThroughOverlay(oc, { jobId: JOB, tenantId: 'tenant-f10', spec: exampleSpec(SPEC) });

    // Each edge, started with no --runtime, checked it runs ranks in sandboxed containers (ADR 0072),
    // and ran its two ranks as containers of the job's image, in the job's network sandbox.
    for (const edge of oc.edges) {
      const output = edge.process.output;
      const isolation = output
        .split('\n')
        .filter((line) => line.includes('"isolation: '))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(isolation.map((r) => r['msg'])).toEqual([
        expect.stringMatching(/^isolation: (container|container-userns|gvisor)$/),
      ]);
      expect(isolation[0]?.['runtime']).toBe('docker');
      expect(logged(output, 'job network sandbox started'), oc.explain(JOB)).toHaveLength(1);
      const ranks = logged(output, 'rank container started');
      expect(ranks, oc.explain(JOB)).toHaveLength(2);
      expect(ranks.every((r) => r['image'] === IMAGE && typeof r['imageId'] === 'string')).toBe(true);
    }

    // At the job's end the ranks' containers and both sandboxes (with the overlay in them) are gone.
    await waitFor(async () => (await jobContainers()).length === 0, {
      timeoutMs: 60_000,
      description: "the job's containers removed",
    });
  }, 420_000);
});
