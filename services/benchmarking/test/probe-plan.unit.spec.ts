import { mulberry32, pairKey } from '@gpunet/netcoord';
import { describe, expect, it } from 'vitest';
import { linkMeasurements } from '../src/domain/links';
import { planProbeRounds, plannedPairs, type ProbeHost, suspectedLanPairs } from '../src/domain/probe-plan';

const hosts = (n: number, busy: (i: number) => boolean = () => false): ProbeHost[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `h${i}`,
    endpoints: [{ address: `10.0.0.${i + 1}`, udpPort: 7946, tcpPort: 7947 }],
    busy: busy(i),
  }));
const bounds = { rttSamples: 8, rttTimeoutMs: 500, throughputMaxBytes: 4 << 20, throughputMaxMs: 2_000 };

describe('planProbeRounds', () => {
  it('probes RTT to ≤ k peers per host first, then bounded transfers in rounds that never share a host', () => {
    const rounds = planProbeRounds(hosts(30), { k: 4, rng: mulberry32(1), bounds, idPrefix: 'c1' });
    const [rtt, ...transfers] = rounds;
    for (const q of rtt!.requests) {
      expect(q.request.targets.length).toBeLessThanOrEqual(4);
      expect(q.request.targets.every((t) => !t.throughput)).toBe(true);
      expect(q.request).toMatchObject({ rttSamples: 8, throughputMaxBytes: 4 << 20, throughputMaxMs: 2_000 });
    }
    expect(plannedPairs(rounds).size).toBeLessThanOrEqual(30 * 4);
    for (const round of transfers) {
      const involved = round.requests.flatMap((q) => [q.prober, q.request.targets[0]!.peerId]);
      expect(new Set(involved).size).toBe(involved.length);
      expect(
        round.requests.every((q) => q.request.targets.length === 1 && q.request.targets[0]!.throughput),
      ).toBe(true);
    }
    expect(transfers.flatMap((r) => r.requests)).toHaveLength(30);
    const ids = rounds.flatMap((r) => r.requests.map((q) => q.request.requestId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[A-Za-z0-9_-]+$/.test(id))).toBe(true);
  });

  it('leaves busy hosts out unless allowed, and hosts without a probe endpoint always', () => {
    const set = hosts(10, (i) => i === 3);
    set[5] = { ...set[5]!, endpoints: [] };
    const pairs = plannedPairs(planProbeRounds(set, { k: 3, rng: mulberry32(2), bounds, idPrefix: 'c' }));
    expect([...pairs].some((p) => p.split('|').includes('h3') || p.split('|').includes('h5'))).toBe(false);
    const allowed = plannedPairs(
      planProbeRounds(set, { k: 3, rng: mulberry32(2), bounds, idPrefix: 'c', allowWhileBusy: true }),
    );
    expect([...allowed].some((p) => p.split('|').includes('h3'))).toBe(true);
  });

  it('plans nothing for a lone host', () => {
    expect(planProbeRounds(hosts(1), { k: 3, rng: mulberry32(1), bounds, idPrefix: 'c' })).toEqual([]);
  });
});

describe('linkMeasurements', () => {
  it('keeps answered peers with their minimum RTT, flags LAN pairs, and sets the expiry', () => {
    const links = linkMeasurements(
      'h0',
      [
        {
          peerId: 'h1',
          endpoint: '10.0.0.2:7946',
          outcome: 'ok',
          rtt: { minUs: 180.4, medianUs: 260, received: 8, sent: 8 },
          throughput: { bitsPerSecond: 9.4e8, bytes: 4 << 20, durationMs: 35.7 },
          path: 'direct',
        },
        {
          peerId: 'h2',
          endpoint: '10.0.0.3:7946',
          outcome: 'ok',
          rtt: { minUs: 24_100, medianUs: 24_900, received: 7, sent: 8 },
          throughput: null,
          path: 'direct',
        },
        { peerId: 'h3', endpoint: null, outcome: 'timeout', rtt: null, throughput: null, path: 'direct' },
      ],
      { measuredAtMs: Date.parse('2030-01-01T00:00:00Z'), ttlMs: 3_600_000, lanRttUs: 1_000 },
    );
    expect(links).toEqual([
      {
        a: 'h0',
        b: 'h1',
        rttUs: 180,
        throughputBitsPerSecond: 940_000_000,
        sameSite: true,
        path: 'direct',
        measuredAt: '2030-01-01T00:00:00.000Z',
        expiresAt: '2030-01-01T01:00:00.000Z',
      },
      expect.objectContaining({ b: 'h2', rttUs: 24_100, throughputBitsPerSecond: null, sameSite: false }),
    ]);
    expect(pairKey('h1', 'h0')).toBe('h0|h1');
  });
});

describe('suspectedLanPairs', () => {
  it('names unmeasured pairs whose coordinates put them on one LAN', () => {
    const coords = new Map([
      ['a', { x: 0, y: 0, height: 50 }],
      ['b', { x: 100, y: 0, height: 60 }],
      ['c', { x: 20_000, y: 0, height: 50 }],
      ['d', { x: 20_200, y: 0, height: 50 }],
    ]);
    expect([...suspectedLanPairs(coords, new Set([pairKey('c', 'd')]), 1_000)]).toEqual([pairKey('a', 'b')]);
  });
});
