import { describe, expect, it } from 'vitest';
import { networkBench } from './network';

// The reduced run of the bench's network section (the full one: `npm run bench:scheduling`): it
// checks what the figures rest on — every case placed, no constraint broken, the measured matrix
// used, both ways of applying a measurement deciding alike — not the timings, which a shared CI
// machine cannot hold to.
describe('bench:scheduling network section, reduced', () => {
  const r = networkBench({ providers: 300, runs: 6, updates: 100, rebuilds: 2, seed: 1 });

  it('places every case on both networks without breaking a constraint', () => {
    expect(r.cases.map((c) => `${c.network} ${c.gang}`)).toEqual(
      ['16 GPUs', '16 GPUs, max_rtt 20 ms', '16 GPUs, min_bandwidth 2 Gbit/s'].flatMap((g) =>
        ['constant', 'sites', 'measured'].map((n) => `${n} ${g}`),
      ),
    );
    for (const c of r.cases) {
      expect(c.placed, `${c.network} ${c.gang}`).toBe(c.runs);
      expect(c.violations, `${c.network} ${c.gang}`).toBe(0);
      expect(c.wallMs.n).toBe(6);
    }
  });

  it('places on measured figures on the measured network, on defaults on the constant one', () => {
    expect(r.snapshots.measured.hostLinks).toBeGreaterThan(r.snapshots.measured.hosts);
    expect(r.snapshots.measured.relayed).toBeGreaterThan(0);
    expect(r.snapshots.constant.hostLinks + r.snapshots.sites.hostLinks).toBe(0);
    expect(r.snapshots.measured.siteLinks).toBe(r.snapshots.sites.siteLinks);
    for (const c of r.cases) {
      const sources = Object.keys(c.pairSources);
      if (c.network === 'measured') {
        expect(sources.every((s) => s === 'host-measured' || s === 'coordinates')).toBe(true);
        expect(c.pairSources['host-measured'] ?? 0).toBeGreaterThan(0);
      } else if (c.network === 'constant') {
        expect(sources.every((s) => s === 'site-lan' || s === 'default')).toBe(true);
      } else expect(sources).not.toContain('host-measured');
    }
  });

  it('applies a measurement both ways with the same next decisions; the projection is measured by its own section', () => {
    expect(r.measurement.sameDecisions).toBe(true);
    expect(r.measurement.rebuild.applyMs.n).toBe(2);
    expect(r.measurement.incremental.nextDecisionMs.n).toBe(2);
    expect(r.measurement.chainedApplyMs.n).toBe(100);
    expect(r.measurement.projection.status).toBe('not-run');
  });
});
