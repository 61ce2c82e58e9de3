import { describe, expect, it } from 'vitest';
import { validateLinkProfile, validateWanSpec, WanProfileError } from '../src';

const endpoints = new Set(['a', 'b', 'relay']);

describe('validateLinkProfile', () => {
  it.each([
    ['an empty profile (a perfect link)', {}, {}],
    [
      'every field',
      { delayMs: 40, jitterMs: 5, reorder: true, lossPct: 1.5, rateBps: 1e7, queuePackets: 50 },
      { delayMs: 40, jitterMs: 5, reorder: true, lossPct: 1.5, rateBps: 1e7, queuePackets: 50 },
    ],
    ['a cut link', { lossPct: 100 }, { lossPct: 100 }],
  ])('accepts %s', (_name, profile, expected) => {
    expect(validateLinkProfile(profile, 'p')).toEqual(expected);
  });

  it.each([
    ['a negative delay', { delayMs: -1 }, 'p.delayMs: must be a number of ms from 0 to 60000 (got -1)'],
    [
      'a delay as a string',
      { delayMs: '40' },
      'p.delayMs: must be a number of ms from 0 to 60000 (got "40")',
    ],
    [
      'an infinite delay',
      { delayMs: Infinity },
      'p.delayMs: must be a number of ms from 0 to 60000 (got null)',
    ],
    [
      'jitter above the delay',
      { delayMs: 2, jitterMs: 3 },
      'p.jitterMs: must not exceed delayMs (2): a packet cannot leave before it arrived',
    ],
    ['loss above 100 %', { lossPct: 101 }, 'p.lossPct: must be a number from 0 to 100 (got 101)'],
    ['a zero rate', { rateBps: 0 }, 'p.rateBps: must be a number of bits per second > 0 (got 0)'],
    [
      'a queue without a rate',
      { queuePackets: 10 },
      'p.queuePackets: needs rateBps: only the rate queue holds packets, so it would be ignored',
    ],
    [
      'a fractional queue',
      { rateBps: 1e6, queuePackets: 1.5 },
      'p.queuePackets: must be an integer ≥ 1 (got 1.5)',
    ],
    [
      'reorder without jitter',
      { delayMs: 10, reorder: true },
      'p.reorder: needs jitterMs > 0: only jitter can reorder packets',
    ],
    ['reorder as a string', { reorder: 'yes' }, 'p.reorder: must be a boolean (got "yes")'],
    ['an unknown field', { latencyMs: 10 }, 'p.latencyMs: unknown field'],
    ['a pair field in a bare profile', { a: 'a' }, 'p.a: unknown field'],
    ['not an object', 40, 'p: must be an object'],
  ])('rejects %s, naming the field', (_name, profile, message) => {
    expect(() => validateLinkProfile(profile, 'p')).toThrow(WanProfileError);
    expect(() => validateLinkProfile(profile, 'p')).toThrow(message);
  });
});

describe('validateWanSpec', () => {
  it('expands a pair into both directions, the way back from bToA when given', () => {
    expect(
      validateWanSpec(
        {
          default: { delayMs: 10 },
          pairs: [
            { a: 'a', b: 'b', delayMs: 40 },
            { a: 'a', b: 'relay', delayMs: 5, bToA: { delayMs: 15, lossPct: 1 } },
          ],
        },
        endpoints,
      ),
    ).toEqual({
      seed: 1,
      default: { delayMs: 10 },
      directions: [
        { from: 'a', to: 'b', profile: { delayMs: 40 } },
        { from: 'b', to: 'a', profile: { delayMs: 40 } },
        { from: 'a', to: 'relay', profile: { delayMs: 5 } },
        { from: 'relay', to: 'a', profile: { delayMs: 15, lossPct: 1 } },
      ],
    });
  });

  it("accepts the README's three sites: B 80 ms (RTT) from A, C 150 ms from A and B", () => {
    const { directions } = validateWanSpec(
      {
        pairs: [
          { a: 'A', b: 'B', delayMs: 40 },
          { a: 'A', b: 'C', delayMs: 75 },
          { a: 'B', b: 'C', delayMs: 75 },
        ],
      },
      new Set(['A', 'B', 'C', 'relay']),
    );
    const rtt = (from: string, to: string) =>
      directions
        .filter((d) => (d.from === from && d.to === to) || (d.from === to && d.to === from))
        .reduce((sum, d) => sum + (d.profile.delayMs ?? 0), 0);
    expect([rtt('A', 'B'), rtt('A', 'C'), rtt('B', 'C')]).toEqual([80, 150, 150]);
  });

  it.each([
    [
      'an unknown endpoint',
      { pairs: [{ a: 'a', b: 'c' }] },
      'wan.pairs[0].b: must name a site or public host of this internet (a, b, relay; got "c")',
    ],
    [
      'a pair of one endpoint',
      { pairs: [{ a: 'a', b: 'a' }] },
      "wan.pairs[0].b: must differ from a (a): a site's own traffic is never delayed",
    ],
    [
      'a pair listed twice (either order)',
      {
        pairs: [
          { a: 'a', b: 'b' },
          { a: 'b', b: 'a', delayMs: 1 },
        ],
      },
      'wan.pairs[1]: lists b–a again (a pair is listed once; bToA gives its way back)',
    ],
    [
      'a bad field in bToA',
      { pairs: [{ a: 'a', b: 'b', bToA: { lossPct: -1 } }] },
      'wan.pairs[0].bToA.lossPct: must be a number from 0 to 100 (got -1)',
    ],
    [
      'a bad default',
      { default: { rateBps: -5 } },
      'wan.default.rateBps: must be a number of bits per second > 0 (got -5)',
    ],
    ['a fractional seed', { seed: 1.5 }, 'wan.seed: must be a safe integer (got 1.5)'],
    ['pairs as an object', { pairs: {} }, 'wan.pairs: must be an array'],
    ['an unknown top-level field', { delayMs: 40 }, 'wan.delayMs: unknown field'],
  ])('rejects %s, naming the field', (_name, spec, message) => {
    expect(() => validateWanSpec(spec, endpoints)).toThrow(message);
  });
});
