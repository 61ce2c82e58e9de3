import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { layoutRanks, startCommands } from '../src/domain/launch-spec';
import { edgeId, specOf } from './support/fixtures';

const LETTERS = 'ABCDEFGH';

describe('launch layout, for any placement of the gang', () => {
  it('numbers ranks 0..n-1 once each, gives each its own reserved GPUs, and starts every rank with its env', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 }), (perNode) => {
        const gpus = perNode.reduce((n, x) => n + x, 0);
        const spec = specOf({ gpus, framework: 'horovod' });
        const placement = [
          {
            name: 'main',
            gpuCount: gpus,
            nodes: perNode.map((n, i) => ({
              providerId: edgeId(LETTERS[i]!),
              hostId: `host-${i}`,
              gpuUuids: Array.from({ length: n }, (_, g) => `GPU-${i}-${g}`),
              reservationId: `res-${i}`,
              ranks: n,
            })),
            predictedStepUs: 1,
            pricePerHourMinor: '1',
          },
        ];
        const layout = layoutRanks(
          spec,
          placement,
          (node) => node.hostId,
          () => 'X',
        );
        expect(layout.ok).toBe(true);
        if (!layout.ok) return;
        const { ranks } = layout.layout;
        expect(ranks.map((r) => r.rank)).toEqual([...Array(gpus).keys()]);
        const seen = new Set<string>();
        for (const r of ranks) {
          const node = placement[0]!.nodes[r.nodeRank]!;
          expect(r.providerId).toBe(node.providerId);
          expect(r.localRank).toBeLessThan(node.ranks);
          for (const uuid of r.gpuUuids) {
            expect(node.gpuUuids).toContain(uuid);
            expect(seen.has(uuid)).toBe(false);
            seen.add(uuid);
          }
        }
        const built = startCommands('job-1', 1, spec, ranks, {
          interface: null,
          overlayAddressOf: () => null,
        });
        expect(built.ok).toBe(true);
        if (!built.ok) return;
        for (const c of built.commands) {
          expect(c.env['CUDA_VISIBLE_DEVICES']).toBe(c.gpuUuids.join(','));
          expect(c.env['WORLD_SIZE']).toBe(String(gpus));
          expect(c.env['MASTER_ADDR']).toBe('host-0');
          expect(c.env['GPUNET_HOSTFILE']!.trim().split('\n')).toHaveLength(perNode.length);
        }
      }),
      { numRuns: 200, seed: 6 },
    );
  });
});
