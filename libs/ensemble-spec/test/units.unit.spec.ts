import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatBandwidth,
  formatDurationMs,
  formatDurationUs,
  formatMoney,
  formatSize,
  parseBandwidth,
  parseDurationMs,
  parseDurationUs,
  parseMoney,
  parseSize,
  type UnitResult,
} from '../src';
import { describeBandwidth, describeDurationUs, describeSize, parseCores, scaleDecimal } from '../src/units';

const value = <T>(r: UnitResult<T>): T => {
  if (!r.ok) expect.fail(r.reason);
  return r.value;
};
const reason = <T>(r: UnitResult<T>): string => {
  if (r.ok) expect.fail(`expected a failure, got ${String(r.value)}`);
  return r.reason;
};

describe('sizes', () => {
  it.each([
    ['40GB', 40e9],
    ['40GiB', 40 * 1024 ** 3],
    ['512MiB', 512 * 1024 ** 2],
    ['1.5TB', 1.5e12],
    ['0.1GB', 1e8],
    ['1 kB', 1000],
    ['3B', 3],
    ['2PiB', 2 * 1024 ** 5],
  ])('%s = %d bytes', (text, bytes) => expect(value(parseSize(text))).toBe(bytes));

  it.each([
    ['40', /write a number and a unit/],
    ['40gb', /did you mean '40GB'/],
    ['40Gb', /bits; sizes are bytes/],
    ['40KB', /ambiguous/],
    ['40 G', /did you mean '40GB' or '40GiB'/],
    ['1.5B', /whole number of bytes/],
    ['-1GB', /invalid size/],
    ['01GB', /invalid size/],
    ['1e3GB', /invalid size/],
    ['40  GB', /invalid size|did you mean/],
  ])('%s is refused: %s', (text, why) => expect(reason(parseSize(text))).toMatch(why));

  it('refuses sizes above the limit', () => expect(reason(parseSize('2GB', 1e9))).toMatch(/too large/));

  it('formats with the largest exact unit', () => {
    expect(formatSize(40e9)).toBe('40GB');
    expect(formatSize(80 * 1024 ** 3)).toBe('80GiB');
    expect(formatSize(1500)).toBe('1500B');
    expect(formatSize(0)).toBe('0B');
    expect(formatSize(1.5e12)).toBe('1500GB');
    expect(describeSize(80e9)).toBe('80 GB');
    expect(describeSize(24 * 1024 ** 3)).toBe('24 GiB');
    expect(describeSize(1234567)).toBe('1.23 MB');
  });

  it('round-trips every byte count through format and parse', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (n) => value(parseSize(formatSize(n))) === n,
      ),
    );
  });
});

describe('bandwidth', () => {
  it.each([
    ['10Gbps', 10e9],
    ['100Mbps', 1e8],
    ['1.5Gbps', 1.5e9],
    ['2Tbps', 2e12],
    ['800 kbps', 800_000],
  ])('%s = %d bits/s', (text, bps) => expect(value(parseBandwidth(text))).toBe(bps));

  it.each([
    ['10GB/s', /'80Gbps'/],
    ['10GBps', /'80Gbps'/],
    ['10gbps', /did you mean '10Gbps'/],
    ['10Gb', /did you mean '10Gbps'/],
    ['10', /bits per second/],
    ['0.5bps', /whole number/],
  ])('%s is refused: %s', (text, why) => expect(reason(parseBandwidth(text))).toMatch(why));

  it('round-trips', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 ** 15 }),
        (n) => value(parseBandwidth(formatBandwidth(n))) === n,
      ),
    );
    expect(describeBandwidth(100e9)).toBe('100 Gbps');
    expect(describeBandwidth(1_500_000)).toBe('1.5 Mbps');
  });
});

describe('durations', () => {
  it.each([
    ['2h', 7_200_000_000],
    ['1h30m', 5_400_000_000],
    ['5ms', 5000],
    ['0.5ms', 500],
    ['250us', 250],
    ['1d2h', 93_600_000_000],
    ['1.5s', 1_500_000],
  ])('%s = %d µs', (text, us) => expect(value(parseDurationUs(text))).toBe(us));

  it.each([
    ['2 hours', /did you mean '2h'/],
    ['10min', /did you mean '10m'/],
    ['5 ms', /without spaces: '5ms'/],
    ['30m1h', /largest first/],
    ['1h1h', /repeats a unit/],
    ['5µs', /'5us'/],
    ['0.5us', /finer than a microsecond/],
    ['PT2H', /invalid duration/],
  ])('%s is refused: %s', (text, why) => expect(reason(parseDurationUs(text))).toMatch(why));

  it('needs whole milliseconds where the field is in ms', () => {
    expect(value(parseDurationMs('2h'))).toBe(7_200_000);
    expect(reason(parseDurationMs('1500us'))).toMatch(/milliseconds/);
    expect(reason(parseDurationMs('2d', 86_400_000))).toMatch(/at most 1d/);
  });

  it('formats compound, largest unit first, and round-trips', () => {
    expect(formatDurationUs(5_400_000_000)).toBe('1h30m');
    expect(formatDurationUs(500)).toBe('500us');
    expect(formatDurationUs(0)).toBe('0s');
    expect(formatDurationMs(90_061_001)).toBe('1d1h1m1s1ms');
    expect(describeDurationUs(500)).toBe('500 µs');
    expect(describeDurationUs(1500)).toBe('1.5 ms');
    expect(describeDurationUs(5_400_000_000)).toBe('1 h 30 min');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (n) => value(parseDurationUs(formatDurationUs(n))) === n,
      ),
    );
  });
});

describe('cores and money', () => {
  it('counts cores in millicores, exactly', () => {
    expect(value(parseCores(0.5))).toBe(500);
    expect(value(parseCores(1.001))).toBe(1001);
    expect(value(parseCores(0.1 + 0.2))).toBe(300);
    expect(reason(parseCores(0.0001))).toMatch(/millicore/);
  });

  it('turns decimals into minor units with bigint, never floats', () => {
    expect(value(parseMoney('2.50', 6))).toBe(2_500_000n);
    expect(value(parseMoney('0.000000000000000001', 18))).toBe(1n);
    expect(value(parseMoney('123456789012345678901234567890', 18))).toBe(
      123456789012345678901234567890n * 10n ** 18n,
    );
    expect(value(parseMoney('2.500', 2))).toBe(250n); // trailing zeros are not precision
    expect(reason(parseMoney('2.505', 2))).toMatch(/more than 2 decimal places/);
    expect(reason(parseMoney('1e3', 2))).toMatch(/invalid amount/);
    expect(formatMoney(2_500_000n, 6)).toBe('2.5');
    expect(formatMoney(5n, 6)).toBe('0.000005');
    expect(formatMoney(300n, 0)).toBe('300');
  });

  it('round-trips money', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.integer({ min: 0, max: 18 }),
        (minor, decimals) => {
          return value(parseMoney(formatMoney(minor, decimals), decimals)) === minor;
        },
      ),
    );
  });

  it('scales decimals exactly or says it cannot', () => {
    expect(scaleDecimal('0.1', 1000n)).toBe(100n);
    expect(scaleDecimal('0.0001', 1000n)).toBeUndefined();
    expect(scaleDecimal('x', 10n)).toBeUndefined();
  });
});
