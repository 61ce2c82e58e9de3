import type { PairPath } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { overlayHostsOf, overlayLinkMeasurements, type OverlayPairSkip } from '../src/domain/overlay-links';

const edge = (c: string) => `U${c.repeat(55)}`;
const [A, B, C] = [edge('A'), edge('B'), edge('C')];
const hosts = new Map([
  ['100.96.0.1', A],
  ['100.96.0.2', B],
  ['100.96.0.3', C],
]);
const options = { measuredAtMs: Date.parse('2030-01-01T00:00:00Z'), ttlMs: 3_600_000, lanRttUs: 1_000 };
const pair = (overrides: Partial<PairPath> = {}): PairPath => ({
  a: '100.96.0.1',
  b: '100.96.0.2',
  path: 'direct',
  rttMs: 12.3456,
  aToBBps: 900_000_000,
  bToABps: 450_000_000,
  ...overrides,
});

describe('overlayLinkMeasurements', () => {
  it('turns a direct pair into one link each way: the pair RTT, each direction its own rate', () => {
    expect(overlayLinkMeasurements([pair()], hosts, options)).toEqual({
      links: [
        {
          a: A,
          b: B,
          rttUs: 12_346,
          throughputBitsPerSecond: 900_000_000,
          sameSite: false,
          path: 'overlay',
          measuredAt: '2030-01-01T00:00:00.000Z',
          expiresAt: '2030-01-01T01:00:00.000Z',
        },
        {
          a: B,
          b: A,
          rttUs: 12_346,
          throughputBitsPerSecond: 450_000_000,
          sameSite: false,
          path: 'overlay',
          measuredAt: '2030-01-01T00:00:00.000Z',
          expiresAt: '2030-01-01T01:00:00.000Z',
        },
      ],
      skipped: [],
    });
  });

  it.each([
    { name: 'below the LAN threshold', rttMs: 0.9995, sameSite: true, rttUs: 1_000 },
    { name: 'at the LAN threshold', rttMs: 1, sameSite: false, rttUs: 1_000 },
    { name: 'far', rttMs: 40, sameSite: false, rttUs: 40_000 },
  ])('decides same-site as direct probes do (LAN_RTT_US, on the measured RTT): $name', (c) => {
    const { links } = overlayLinkMeasurements([pair({ rttMs: c.rttMs })], hosts, options);
    expect(links.map((l) => [l.rttUs, l.sameSite])).toEqual([
      [c.rttUs, c.sameSite],
      [c.rttUs, c.sameSite],
    ]);
  });

  it('keeps an unmeasured direction null (the projection keeps the last live rate)', () => {
    const { links } = overlayLinkMeasurements([pair({ aToBBps: null })], hosts, options);
    expect(links.map((l) => l.throughputBitsPerSecond)).toEqual([null, 450_000_000]);
  });

  it('measures a relayed pair as relayed, never same-site, whatever its RTT (the relay path is what a job gets)', () => {
    const { links, skipped } = overlayLinkMeasurements(
      [pair({ path: 'relayed', rttMs: 0.5 })],
      hosts,
      options,
    );
    expect(skipped).toEqual([]);
    expect(links.map((l) => [l.a, l.b, l.rttUs, l.sameSite, l.path, l.relayed])).toEqual([
      [A, B, 500, false, 'overlay', true],
      [B, A, 500, false, 'overlay', true],
    ]);
  });

  it.each<{ name: string; pair: PairPath; reason: OverlayPairSkip }>([
    {
      name: 'relayed without an RTT',
      pair: pair({ path: 'relayed', rttMs: null }),
      reason: 'relayed-no-rtt',
    },
    { name: 'mixed (the ends disagree)', pair: pair({ path: 'mixed' }), reason: 'mixed' },
    { name: 'unreachable', pair: pair({ path: 'unreachable', rttMs: null }), reason: 'unreachable' },
    { name: 'unknown (an end never reported)', pair: pair({ path: 'unknown' }), reason: 'unknown' },
    { name: 'direct without an RTT', pair: pair({ rttMs: null }), reason: 'no-rtt' },
    { name: 'an address the launch does not name', pair: pair({ b: '100.96.0.9' }), reason: 'unknown-host' },
    {
      name: 'two addresses of one host',
      pair: pair({ b: '100.96.0.4' }),
      reason: 'same-host',
    },
  ])('yields no link for a pair that is $name', (c) => {
    const withAlias = new Map([...hosts, ['100.96.0.4', A]]);
    expect(
      overlayLinkMeasurements([c.pair, pair({ a: '100.96.0.2', b: '100.96.0.3' })], withAlias, options),
    ).toEqual({
      links: [expect.objectContaining({ a: B, b: C }), expect.objectContaining({ a: C, b: B })],
      skipped: [{ a: c.pair.a, b: c.pair.b, reason: c.reason }],
    });
  });
});

describe('overlayHostsOf', () => {
  const rank = (providerId: string, address: string) => ({ providerId, address });

  it('maps each IPv4 overlay address to its edge once, however many ranks the host runs', () => {
    expect(overlayHostsOf([rank(A, '100.96.0.1'), rank(A, '100.96.0.1'), rank(B, '100.96.0.2')])).toEqual(
      new Map([
        ['100.96.0.1', A],
        ['100.96.0.2', B],
      ]),
    );
  });

  it('ignores addresses that are not IPv4 (host ids, names) and drops one two edges claim', () => {
    expect(
      overlayHostsOf([
        rank(A, 'host-a.internal'),
        rank(B, 'fd00::2'),
        rank(A, '100.96.0.7'),
        rank(C, '100.96.0.7'),
        rank(C, '100.96.0.3'),
      ]),
    ).toEqual(new Map([['100.96.0.3', C]]));
  });
});
