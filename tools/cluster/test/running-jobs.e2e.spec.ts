import { REPO_ROOT, requireTestbed, TestProcess } from '@gpunet/netns-testbed';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * docs/running-jobs.md, executed: the cluster from its step 1 (`npm run demo -- --keep --no-job`),
 * then every `sh` block the tutorial marks `<!-- ci: run -->`, in order, with the two `export`
 * lines the demo printed — each must exit 0. Ctrl-C (SIGINT) then stops the whole cluster.
 */
const ok = await requireTestbed('docs/running-jobs.md (the tutorial)');

const TUTORIAL = join(REPO_ROOT, 'docs/running-jobs.md');

/** The `sh` blocks marked `<!-- ci: run -->`, in document order. */
const runnableBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/<!-- ci: run -->\s*```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

describe.skipIf(!ok)('docs/running-jobs.md', () => {
  it('every marked step runs against the cluster of its step 1', async () => {
    const blocks = runnableBlocks(readFileSync(TUTORIAL, 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const cluster = new TestProcess(
      'demo --keep',
      ['bash', join(REPO_ROOT, 'scripts/demo.sh'), '--keep', '--no-job'],
      {
        cwd: REPO_ROOT,
      },
    );
    try {
      const [, gateway, key] = await cluster.waitForOutput(
        /export GPUNET_GATEWAY=(\S+)\n\s*export GPUNET_API_KEY=(\S+)/,
        { timeoutMs: 180_000 },
      );
      for (const [i, block] of blocks.entries()) {
        const step = new TestProcess(`tutorial block ${i + 1}`, ['bash', '-euo', 'pipefail', '-c', block], {
          cwd: REPO_ROOT,
          env: {
            ...process.env,
            GPUNET_GATEWAY: gateway!,
            GPUNET_API_KEY: key!,
            GPUNET_CONFIG: join(REPO_ROOT, 'reports', `tutorial-${process.pid}.json`),
          },
        });
        const exit = await step.exited;
        expect(exit.code, `block ${i + 1}:\n${block}\n${step.output.slice(-4000)}`).toBe(0);
      }
      // Step 4's job completed on two providers and step 6's cancel was accepted.
      cluster.kill('SIGINT');
      const stopped = await cluster.exited;
      expect(stopped.code, cluster.output.slice(-3000)).toBe(130);
      expect(cluster.stdout).toContain('stopping every process');
    } finally {
      if (!cluster.exit) await cluster.stop(10_000);
    }
  }, 400_000);
});
