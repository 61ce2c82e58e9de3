import { requireTestbed, REPO_ROOT, TestProcess } from '@gpunet/netns-testbed';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The README's first command, as a smoke test: `npm run demo` (scripts/demo.sh) runs non-interactively
 * to the end — every service, three providers in their own namespaces, benchmarking's measurements of
 * them and of their links, the 4-rank DDP job through the gateway and the CLI, the settlement
 * statement — and exits 0.
 */
const ok = await requireTestbed('the demo (npm run demo)');

describe.skipIf(!ok)('npm run demo', () => {
  it('runs the multi-provider job to completion and prints its statement', async () => {
    const demo = new TestProcess('demo', ['bash', join(REPO_ROOT, 'scripts/demo.sh')], { cwd: REPO_ROOT });
    const exit = await demo.exited;
    expect(exit.code, demo.output.slice(-6000)).toBe(0);
    const out = demo.stdout;
    expect(out).toMatch(/provider alpha: 2 simulated RTX 4090 \(labelled simulated\), own namespace/);
    // Benchmarking measured every provider — simulated GPUs said to be simulated — and every pair.
    for (const name of ['alpha', 'beta', 'gamma'])
      expect(out).toMatch(
        new RegExp(
          `benchmarked ${name}: 2 × NVIDIA GeForce RTX 4090, fp16 [\\d.]+ / [\\d.]+ TFLOPS.*\\(simulated: `,
        ),
      );
    for (const pair of ['alpha ↔ beta', 'alpha ↔ gamma', 'beta ↔ gamma'])
      expect(out).toMatch(new RegExp(`link ${pair}: RTT \\d+\\.\\d{3} ms, measured \\(direct probe\\)`));
    expect(out).toMatch(/placed on .*\(2 GPUs\), .*\(2 GPUs\)/);
    // Every rank's last line says its loss fell.
    expect(out.match(/"event": "done".*"loss_fell": true/g)).toHaveLength(4);
    expect(out).toMatch(/settlement statement of job \S+ \(settled\)/);
    expect(out).toMatch(/refunded to tenant +\d+\.\d{6} NTX/);
    expect(out).toContain('the job completed');
  }, 300_000);
});
