import { describe, expect, it } from 'vitest';
import {
  PYTHON,
  events,
  gpunetRankEnv,
  loadExample,
  pythonImports,
  requireOrSkip,
  runRanks,
  said,
} from './example-ranks';

/**
 * Runs docs/examples/12-cpu-model-parallel.yaml for real: two ranks of pipeline_train.py, each
 * holding half of the model, activations and gradients crossing between them over Gloo. Skipped
 * where /usr/bin/python3 has no torch (`apt-get install python3-torch`), except under CI.
 */
const ready = requireOrSkip(pythonImports('torch'), `${PYTHON} with torch`, 'python3-torch');

describe.skipIf(!ready)('12-cpu-model-parallel.yaml', () => {
  it(
    'splits the model across 2 Gloo ranks, and the loss falls as in one process',
    { timeout: 400_000 },
    async () => {
      const a = loadExample('12-cpu-model-parallel.yaml');
      expect(a).toMatchObject({ executor: 'process', ranks: 2, resources: { gpus: null } });
      expect(a.distributed?.framework).toBe('torchrun');
      const steps = Number(a.execution.cmd[a.execution.cmd.indexOf('--steps') + 1]);

      const ranks = await runRanks(a, (rank, port) => gpunetRankEnv(a, rank, port));

      for (const [rank, r] of ranks.entries()) {
        expect(r.code, said(r)).toBe(0);
        const lines = events(r, 'step', rank);
        expect(lines).toHaveLength(steps);
        expect(
          lines.every((s) => s['world_size'] === 2 && s['backend'] === 'gloo' && s['stage'] === rank),
        ).toBe(true);
        // Stage 0 sends activations forward and gets their gradients back; stage 1 the reverse.
        expect(lines[0]).toMatchObject(
          rank === 0
            ? { sent: ['activations'], received: ['gradients'] }
            : { sent: ['gradients'], received: ['activations'] },
        );
        const done = events(r, 'done', rank)[0]!;
        expect(done['loss_fell']).toBe(true);
        expect(done['last_loss'] as number).toBeLessThan((done['first_loss'] as number) / 2);
        expect(done['weights_moved'] as number).toBeGreaterThan(0);
      }
      // Both ranks print the same curve (the last stage's loss, broadcast) …
      const curve = (rank: number) => events(ranks[rank]!, 'step', rank).map((s) => s['loss']);
      expect(curve(0)).toEqual(curve(1));
      // … and it is the curve of the same model trained in one process: nothing was lost in transit.
      expect(events(ranks[0]!, 'done', 0)[0]).toMatchObject({ matches_reference: true });
    },
  );
});
