import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectSites,
  estimateRtt,
  minRttByPair,
  mulberry32,
  pairKey,
  probeRounds,
  samplePeers,
  seedOf,
} from '../src';

const hostsOf = (n: number) => Array.from({ length: n }, (_, i) => `h${i}`);

describe('samplePeers', () => {
  it('keeps every host within k probes out and maxInbound in, never a pair twice, never O(n²)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer(),
        (n, k, seed) => {
          const hosts = hostsOf(n);
          const pairs = samplePeers(hosts, { k, rng: mulberry32(seed) });
          const out = new Map<string, number>();
          const inb = new Map<string, number>();
          const keys = new Set<string>();
          for (const p of pairs) {
            expect(p.prober).not.toBe(p.peer);
            out.set(p.prober, (out.get(p.prober) ?? 0) + 1);
            inb.set(p.peer, (inb.get(p.peer) ?? 0) + 1);
            keys.add(pairKey(p.prober, p.peer));
          }
          expect(keys.size).toBe(pairs.length);
          for (const h of hosts) {
            expect(out.get(h) ?? 0).toBeLessThanOrEqual(k);
            expect(inb.get(h) ?? 0).toBeLessThanOrEqual(k);
          }
          expect(pairs.length).toBeLessThanOrEqual(n * k);
          expect(pairs.length).toBeLessThanOrEqual((n * (n - 1)) / 2);
        },
      ),
    );
  });

  it('gives every host its k peers when there are enough hosts', () => {
    const pairs = samplePeers(hostsOf(100), { k: 4, rng: mulberry32(3) });
    expect(pairs.length).toBeGreaterThanOrEqual(390);
  });

  it('is deterministic for a seed, independent of input order', () => {
    const a = samplePeers(hostsOf(20), { k: 3, rng: mulberry32(seedOf('round-1')) });
    const b = samplePeers(hostsOf(20).reverse(), { k: 3, rng: mulberry32(seedOf('round-1')) });
    expect(b).toEqual(a);
  });

  it('prefers pairs never measured, then those measured longest ago', () => {
    const hosts = hostsOf(4);
    const lastMeasured = new Map<string, number>();
    for (const a of hosts) for (const b of hosts) if (a < b) lastMeasured.set(pairKey(a, b), 1000);
    lastMeasured.delete(pairKey('h0', 'h3'));
    lastMeasured.set(pairKey('h1', 'h2'), 5);
    const pairs = samplePeers(hosts, { k: 1, rng: mulberry32(1), lastMeasured });
    const keys = pairs.map((p) => pairKey(p.prober, p.peer));
    expect(keys).toContain(pairKey('h0', 'h3'));
    expect(keys).toContain(pairKey('h1', 'h2'));
  });

  it('probes preferred pairs first (suspected LAN neighbours)', () => {
    const hosts = hostsOf(30);
    const pairs = samplePeers(hosts, {
      k: 2,
      rng: mulberry32(5),
      prefer: (a, b) => pairKey(a, b) === pairKey('h3', 'h17') || pairKey(a, b) === pairKey('h8', 'h9'),
    });
    const keys = new Set(pairs.map((p) => pairKey(p.prober, p.peer)));
    expect(keys.has(pairKey('h3', 'h17'))).toBe(true);
    expect(keys.has(pairKey('h8', 'h9'))).toBe(true);
  });

  it('leaves out excluded pairs (a host busy with a job)', () => {
    const pairs = samplePeers(hostsOf(10), {
      k: 3,
      rng: mulberry32(2),
      exclude: (a, b) => a === 'h4' || b === 'h4',
    });
    expect(pairs.some((p) => p.prober === 'h4' || p.peer === 'h4')).toBe(false);
  });
});

describe('probeRounds', () => {
  it('puts every probe in exactly one round and every host in at most one probe per round', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer(),
        (n, k, seed) => {
          const pairs = samplePeers(hostsOf(n), { k, rng: mulberry32(seed) });
          const rounds = probeRounds(pairs);
          expect(rounds.flat()).toHaveLength(pairs.length);
          for (const round of rounds) {
            const hosts = round.flatMap((p) => [p.prober, p.peer]);
            expect(new Set(hosts).size).toBe(hosts.length);
          }
          expect(rounds.length).toBeLessThanOrEqual(Math.max(1, 4 * k - 1));
        },
      ),
    );
  });
});

describe('detectSites', () => {
  it('groups hosts joined by LAN-fast links, transitively, named by their lowest id', () => {
    const sites = detectSites(
      ['d', 'c', 'b', 'a', 'e'],
      [
        { a: 'c', b: 'd', rttUs: 300 },
        { a: 'b', b: 'c', rttUs: 450 },
        { a: 'a', b: 'b', rttUs: 25_000 },
        { a: 'd', b: 'e', rttUs: 1_000 },
      ],
    );
    expect(Object.fromEntries(sites)).toEqual({ a: 'a', b: 'b', c: 'b', d: 'b', e: 'e' });
  });

  it('does not depend on the order of links or hosts', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            a: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
            b: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
            rttUs: fc.integer({ min: 50, max: 5000 }),
          }),
          { maxLength: 12 },
        ),
        (links) => {
          const hosts = ['a', 'b', 'c', 'd', 'e', 'f'];
          const one = detectSites(hosts, links);
          const two = detectSites([...hosts].reverse(), [...links].reverse());
          expect(Object.fromEntries(two)).toEqual(Object.fromEntries(one));
          for (const [h, site] of one) expect(site <= h).toBe(true);
        },
      ),
    );
  });
});

describe('estimateRtt', () => {
  const coords = new Map([
    ['a', { x: 0, y: 0, height: 100 }],
    ['b', { x: 3000, y: 4000, height: 50 }],
  ]);

  it('prefers a measurement of the pair, then the coordinates, else null', () => {
    expect(estimateRtt('a', 'b', coords)).toEqual({ rttUs: 5150, source: 'coordinates' });
    expect(
      estimateRtt(
        'b',
        'a',
        coords,
        minRttByPair([
          { a: 'a', b: 'b', rttUs: 6000 },
          { a: 'b', b: 'a', rttUs: 5900 },
        ]),
      ),
    ).toEqual({
      rttUs: 5900,
      source: 'measured',
    });
    expect(estimateRtt('a', 'z', coords)).toBeNull();
    expect(estimateRtt('a', 'a', coords)).toEqual({ rttUs: 0, source: 'measured' });
  });
});
