import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry, createSnapshot, defaultRegistry, gangRequest, scheduleGang } from '../src';
import { AVOID_PROVIDERS, avoidProviders } from './examples/avoid-providers.filter';
import { measuredTflopsScore } from './examples/measured-tflops.score';
import { cluster, gpus, host, provider, site } from './fixtures';

const s = createSnapshot(
  cluster(
    [
      provider('declared', [host('d0', 'a', gpus(4, 'A100-80G', { tflopsMeasured: false }))]),
      provider('measured', [host('m0', 'a', gpus(4, 'A100-80G'))]),
    ],
    [site('a')],
  ),
);
const gang = gangRequest({ gpuCount: 4 });
const hostOf = (r: ReturnType<typeof scheduleGang>) =>
  r.code === 'Success' ? r.placement.allocations[0]!.nodes[0]!.hostId : r.message;

// docs/scheduling.md, "How to add a plugin", shows these files and this registry.
const registry = createRegistry({
  filters: [...defaultRegistry.filters, avoidProviders(['p-banned'])],
  scores: [...defaultRegistry.scores, { plugin: measuredTflopsScore, weight: 5 }],
});

describe('adding plugins through a registry', () => {
  it('a score plugin changes which of two equal hosts wins', () => {
    expect(hostOf(scheduleGang(s, 'job', gang, { seed: 1, registry }))).toBe('m0');
  });

  it('a filter plugin rules hosts out and explains it', () => {
    const deny = createRegistry({
      filters: [...defaultRegistry.filters, avoidProviders(['declared', 'measured'])],
    });
    const r = scheduleGang(s, 'job', gang, { seed: 1, registry: deny });
    expect(r.code).toBe('UnschedulableAndUnresolvable');
    if (r.code === 'Success') return;
    expect(r.message).toBe('4 GPUs asked; only 0 match not on declared, measured');
    expect(r.reasons).toContainEqual(expect.objectContaining({ plugin: AVOID_PROVIDERS, gpus: 8 }));
  });

  it('docs/scheduling.md quotes the example plugins verbatim', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/scheduling.md'), 'utf8');
    for (const file of ['examples/avoid-providers.filter.ts', 'examples/measured-tflops.score.ts']) {
      const source = readFileSync(join(import.meta.dirname, file), 'utf8').replace(
        "from '../../src'",
        "from '@gpunet/scheduling'",
      );
      expect(doc).toContain(source.trim());
    }
  });
});
