import { describe, expect, it } from 'vitest';
import { createSnapshot, predictStepTime, type WorkloadModel } from '../src';
import { cluster, gpus, host, provider, site } from './fixtures';

// 1 GB all-reduce, 1e14 FLOP per GPU: easy numbers.
const w: WorkloadModel = { precision: 'bf16', flopPerStepPerGpu: 1e14, allReduceBytes: 1e9 };
const nv = { kind: 'nvlink' as const, bandwidthBps: 8e11, latencyUs: 2 };
const s = createSnapshot(
  cluster(
    [
      provider('p0', [
        host('h0', 'a', gpus(8), { intraHost: nv }),
        host('h1', 'a', gpus(8), { intraHost: nv }),
      ]),
      provider('p1', [host('h2', 'b', gpus(8), { intraHost: nv, nicBandwidthBps: 50e9 })]),
    ],
    [site('a', { lanBandwidthBps: 100e9, lanRttUs: 100 }), site('b')],
    { siteLinks: [{ a: 'a', b: 'b', bandwidthBps: 10e9, rttUs: 20_000 }] },
  ),
);
const h = (id: string) => s.inventory.hostById.get(id)!;

describe('predictStepTime', () => {
  it('one GPU: compute only', () => {
    const p = predictStepTime(s.inventory, w, [{ host: h('h0'), gpus: 1 }], 100);
    expect(p).toMatchObject({ computeUs: 1e6, commUs: 0, stepUs: 1e6 });
  });

  it('one host: a ring over NVLink', () => {
    const p = predictStepTime(s.inventory, w, [{ host: h('h0'), gpus: 8 }], 100);
    // 2·7/8 · 8e9 bit / 8e11 bit/s = 17.5 ms, plus 14 hops × 2 µs.
    expect(p.intraHostUs).toBeCloseTo(17_500 + 28);
    expect(p.intraSiteUs).toBe(0);
    expect(p.interSiteUs).toBe(0);
  });

  it('two hosts at one site: host rings, then a LAN ring of two', () => {
    const p = predictStepTime(
      s.inventory,
      w,
      [
        { host: h('h0'), gpus: 4 },
        { host: h('h1'), gpus: 8 },
      ],
      50,
    );
    expect(p.computeUs).toBe(2e6);
    expect(p.intraHostUs).toBeCloseTo(17_528);
    // 2·1/2 · 8e9 / 1e11 = 80 ms, plus 2 one-way hops of 50 µs.
    expect(p.intraSiteUs).toBeCloseTo(80_000 + 100);
  });

  it('two sites: the wide-area ring over the measured site link', () => {
    const p = predictStepTime(
      s.inventory,
      w,
      [
        { host: h('h0'), gpus: 8 },
        { host: h('h1'), gpus: 8 },
        { host: h('h2'), gpus: 8 },
      ],
      100,
    );
    expect(p.intraSiteUs).toBeCloseTo(80_100);
    // 2·1/2 · 8e9 / 1e10 = 800 ms, plus 2 one-way hops of 10 ms.
    expect(p.interSiteUs).toBeCloseTo(800_000 + 20_000);
    expect(p.stepUs).toBeCloseTo(p.computeUs + p.intraHostUs + p.intraSiteUs + p.interSiteUs);
  });

  it('the slowest GPU sets the pace', () => {
    const fast = predictStepTime(s.inventory, w, [{ host: h('h0'), gpus: 2 }], 200);
    const slow = predictStepTime(s.inventory, w, [{ host: h('h0'), gpus: 2 }], 100);
    expect(slow.computeUs).toBe(2 * fast.computeUs);
  });
});
