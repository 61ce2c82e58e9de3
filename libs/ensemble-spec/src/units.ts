/**
 * Strict unit parsing and canonical formatting. Every quantity becomes an exact integer in the
 * normalized form (bytes, bits per second, milliseconds or microseconds, millicores, minor units of
 * money); arithmetic is done on decimal digits with bigint so that `0.1GB` is exactly 100,000,000
 * bytes and never a float approximation.
 */

/** A parse result: the exact value, or a reason a person can act on. */
export type UnitResult<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): UnitResult<T> => ({ ok: true, value });
const fail = <T>(reason: string): UnitResult<T> => ({ ok: false, reason });

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * `digits` (a non-negative decimal such as `1.25`) × `factor`, exactly, or `undefined` when the
 * product is not an integer (`1.5` bytes). `undefined` too when `digits` is not a plain decimal.
 */
export const scaleDecimal = (digits: string, factor: bigint): bigint | undefined => {
  const m = DECIMAL.exec(digits);
  if (!m) return undefined;
  const whole = BigInt(m[1]!);
  const frac = m[2] ?? '';
  const denominator = 10n ** BigInt(frac.length);
  const numerator = (whole * denominator + BigInt(frac === '' ? '0' : frac)) * factor;
  if (numerator % denominator !== 0n) return undefined;
  return numerator / denominator;
};

const toSafeNumber = (value: bigint, max: number, what: string, shown: string): UnitResult<number> =>
  value > BigInt(max) ? fail(`${shown} is too large: the largest ${what} is ${max}`) : ok(Number(value));

// ---------------------------------------------------------------------------------------------------
// Sizes (bytes)

/** Byte multipliers; `KB` is refused because it means 1000 to some and 1024 to others. */
export const SIZE_UNITS = {
  B: 1n,
  kB: 1000n,
  MB: 1000n ** 2n,
  GB: 1000n ** 3n,
  TB: 1000n ** 4n,
  PB: 1000n ** 5n,
  KiB: 1024n,
  MiB: 1024n ** 2n,
  GiB: 1024n ** 3n,
  TiB: 1024n ** 4n,
  PiB: 1024n ** 5n,
} as const;

/** The pattern the JSON Schema publishes for sizes; the parser below gives the reasons. */
export const SIZE_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)? ?(B|kB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|PiB)$';
const SIZE_RE = new RegExp(SIZE_PATTERN);

const sizeHint = (text: string): string => {
  const m = /^([0-9.]+)\s*([A-Za-z/]+)$/.exec(text.trim());
  if (m) {
    const [, num, unit] = m as unknown as [string, string, string];
    if (unit === 'KB') return `'KB' is ambiguous — write '${num}kB' (1000 bytes) or '${num}KiB' (1024 bytes)`;
    if (/^[kKMGTP]b$/.test(unit) || /^[kKMGTP]bit$/i.test(unit) || /bps$/i.test(unit)) {
      return `'${unit}' is bits; sizes are bytes — write '${num}${unit[0]!.toUpperCase()}B' or '${num}${unit[0]!.toUpperCase()}iB'`;
    }
    const canonical = Object.keys(SIZE_UNITS).find((u) => u.toLowerCase() === unit.toLowerCase());
    if (canonical && canonical !== unit)
      return `unit '${unit}' is spelled '${canonical}' — did you mean '${num}${canonical}'?`;
    if (/^[kmgtp]i?$/i.test(unit)) {
      const u = unit[0]!.toUpperCase();
      return `'${unit}' is not a size unit — did you mean '${num}${u}B' or '${num}${u}iB'?`;
    }
  }
  return `invalid size '${text}' — write a number and a unit, e.g. '40GB' (10^9 bytes) or '40GiB' (2^30 bytes)`;
};

/** Parses `40GB`, `40GiB`, `512MiB`, `1.5TB` into bytes (an exact integer). */
export const parseSize = (text: string, maxBytes = Number.MAX_SAFE_INTEGER): UnitResult<number> => {
  if (!SIZE_RE.test(text)) return fail(sizeHint(text));
  const m = /^([0-9.]+) ?([A-Za-z]+)$/.exec(text)!;
  const bytes = scaleDecimal(m[1]!, SIZE_UNITS[m[2] as keyof typeof SIZE_UNITS]);
  if (bytes === undefined) return fail(`'${text}' is not a whole number of bytes`);
  return toSafeNumber(bytes, maxBytes, 'size in bytes', `'${text}'`);
};

/** The message for a size written as a bare number (`min_vram: 40`). */
export const bareSizeHint = (n: unknown): string =>
  `add a unit: '${String(n)}GB' or '${String(n)}GiB' (a bare number is ambiguous — NuNet V1 used MB, then GB)`;

const pickUnit = (value: bigint, units: readonly (readonly [string, bigint])[]): string => {
  for (const [unit, factor] of units) {
    if (value !== 0n && value % factor === 0n) return `${value / factor}${unit}`;
  }
  const [unit] = units[units.length - 1]!;
  return `${value}${unit}`;
};

const SIZE_FORMAT_ORDER: readonly (readonly [string, bigint])[] = [
  ['PiB', SIZE_UNITS.PiB],
  ['PB', SIZE_UNITS.PB],
  ['TiB', SIZE_UNITS.TiB],
  ['TB', SIZE_UNITS.TB],
  ['GiB', SIZE_UNITS.GiB],
  ['GB', SIZE_UNITS.GB],
  ['MiB', SIZE_UNITS.MiB],
  ['MB', SIZE_UNITS.MB],
  ['KiB', SIZE_UNITS.KiB],
  ['kB', SIZE_UNITS.kB],
  ['B', 1n],
];

/** Canonical text for a byte count: the largest unit that divides it exactly (`40GB`, `80GiB`). */
export const formatSize = (bytes: number): string => pickUnit(BigInt(bytes), SIZE_FORMAT_ORDER);

/** Bytes for people: `80 GB`, `24 GiB`, `1.5 TB` (rounded to three significant digits where inexact). */
export const describeSize = (bytes: number): string => {
  const exact = formatSize(bytes);
  const m = /^(\d+)([A-Za-z]+)$/.exec(exact)!;
  if (m[2] !== 'B' || bytes < 1000) return `${m[1]} ${m[2]}`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'] as const;
  let v = bytes;
  let i = -1;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${Number(v.toPrecision(3))} ${units[i]!}`;
};

// ---------------------------------------------------------------------------------------------------
// Bandwidth (bits per second)

export const BANDWIDTH_UNITS = {
  bps: 1n,
  kbps: 1000n,
  Mbps: 1000n ** 2n,
  Gbps: 1000n ** 3n,
  Tbps: 1000n ** 4n,
} as const;

export const BANDWIDTH_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)? ?(bps|kbps|Mbps|Gbps|Tbps)$';
const BANDWIDTH_RE = new RegExp(BANDWIDTH_PATTERN);

const bandwidthHint = (text: string): string => {
  const m = /^([0-9.]+)\s*([A-Za-z/]+)$/.exec(text.trim());
  if (m) {
    const [, num, unit] = m as unknown as [string, string, string];
    const bytesPerSecond = /^([kKMGT]?)(B\/s|Bps|iB\/s)$/.exec(unit);
    if (bytesPerSecond) {
      const bits = Number(num) * 8;
      const p = bytesPerSecond[1] === 'K' ? 'k' : bytesPerSecond[1]!;
      return `bandwidth is in bits per second: '${text}' is '${Number.isFinite(bits) ? bits : num + '×8'}${p}bps'`;
    }
    const canonical = Object.keys(BANDWIDTH_UNITS).find((u) => u.toLowerCase() === unit.toLowerCase());
    if (canonical && canonical !== unit)
      return `unit '${unit}' is spelled '${canonical}' — did you mean '${num}${canonical}'?`;
    const bitUnit = /^([kKMGT])(b|bit|bits)(\/s)?$/.exec(unit);
    if (bitUnit) {
      const p = bitUnit[1] === 'K' ? 'k' : bitUnit[1]!;
      return `did you mean '${num}${p}bps'?`;
    }
  }
  return `invalid bandwidth '${text}' — write a number and a unit in bits per second, e.g. '10Gbps' or '100Mbps'`;
};

/** Parses `10Gbps`, `100Mbps`, `1.5Gbps` into bits per second. */
export const parseBandwidth = (text: string, max = 10 ** 15): UnitResult<number> => {
  if (!BANDWIDTH_RE.test(text)) return fail(bandwidthHint(text));
  const m = /^([0-9.]+) ?([A-Za-z]+)$/.exec(text)!;
  const bps = scaleDecimal(m[1]!, BANDWIDTH_UNITS[m[2] as keyof typeof BANDWIDTH_UNITS]);
  if (bps === undefined) return fail(`'${text}' is not a whole number of bits per second`);
  return toSafeNumber(bps, max, 'bandwidth in bits per second', `'${text}'`);
};

export const bareBandwidthHint = (n: unknown): string =>
  `add a unit: '${String(n)}Gbps' or '${String(n)}Mbps' (bits per second)`;

const BANDWIDTH_FORMAT_ORDER: readonly (readonly [string, bigint])[] = [
  ['Tbps', BANDWIDTH_UNITS.Tbps],
  ['Gbps', BANDWIDTH_UNITS.Gbps],
  ['Mbps', BANDWIDTH_UNITS.Mbps],
  ['kbps', BANDWIDTH_UNITS.kbps],
  ['bps', 1n],
];

export const formatBandwidth = (bps: number): string => pickUnit(BigInt(bps), BANDWIDTH_FORMAT_ORDER);

export const describeBandwidth = (bps: number): string => {
  const units = ['bps', 'kbps', 'Mbps', 'Gbps', 'Tbps'] as const;
  let v = bps;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${Number(v.toPrecision(4))} ${units[i]!}`;
};

// ---------------------------------------------------------------------------------------------------
// Durations (microseconds internally; fields choose ms or µs)

export const DURATION_UNITS_US = {
  us: 1n,
  ms: 1000n,
  s: 1_000_000n,
  m: 60_000_000n,
  h: 3_600_000_000n,
  d: 86_400_000_000n,
} as const;

/** One or more `<number><unit>` parts, largest unit first: `2h`, `1h30m`, `0.5ms`, `250us`. */
export const DURATION_PATTERN = '^((0|[1-9][0-9]*)(\\.[0-9]+)?(d|h|m|s|ms|us))+$';
const DURATION_RE = new RegExp(DURATION_PATTERN);
const DURATION_PART = /(0|[1-9]\d*)(\.\d+)?(d|h|ms|m|s|us)/g;

const durationHint = (text: string): string => {
  const t = text.trim();
  if (/µs/.test(t)) return `write microseconds as 'us': '${t.replace(/µs/g, 'us').replace(/\s+/g, '')}'`;
  const m = /^([0-9.]+)\s*([A-Za-z]+)$/.exec(t);
  if (m) {
    const [, num, unit] = m as unknown as [string, string, string];
    const words: Record<string, string> = {
      sec: 's',
      secs: 's',
      second: 's',
      seconds: 's',
      min: 'm',
      mins: 'm',
      minute: 'm',
      minutes: 'm',
      hr: 'h',
      hrs: 'h',
      hour: 'h',
      hours: 'h',
      day: 'd',
      days: 'd',
      msec: 'ms',
      millis: 'ms',
      milliseconds: 'ms',
      usec: 'us',
      microseconds: 'us',
      H: 'h',
      S: 's',
      M: 'm',
      D: 'd',
      MS: 'ms',
      Ms: 'ms',
    };
    const unitFix = words[unit] ?? words[unit.toLowerCase()];
    if (unitFix) return `did you mean '${num}${unitFix}'?`;
  }
  if (/\s/.test(t) && DURATION_RE.test(t.replace(/\s+/g, ''))) {
    return `write durations without spaces: '${t.replace(/\s+/g, '')}'`;
  }
  return `invalid duration '${text}' — write a number and a unit (d, h, m, s, ms, us), e.g. '2h', '1h30m', '5ms'`;
};

/** Parses a duration into microseconds. */
export const parseDurationUs = (text: string, maxUs = Number.MAX_SAFE_INTEGER): UnitResult<number> => {
  const t = text;
  if (!DURATION_RE.test(t)) return fail(durationHint(text));
  let total = 0n;
  let previous = Infinity;
  for (const part of t.matchAll(DURATION_PART)) {
    const unit = part[3] as keyof typeof DURATION_UNITS_US;
    const factor = DURATION_UNITS_US[unit];
    if (Number(factor) >= previous) {
      return fail(
        `'${text}' repeats a unit or has them out of order — write the largest first, e.g. '1h30m'`,
      );
    }
    previous = Number(factor);
    const value = scaleDecimal(part[1]! + (part[2] ?? ''), factor);
    if (value === undefined) return fail(`'${text}' is finer than a microsecond`);
    total += value;
  }
  return toSafeNumber(total, maxUs, 'duration in microseconds', `'${text}'`);
};

/** Parses a duration into whole milliseconds (`0.5ms` is refused with a reason). */
export const parseDurationMs = (text: string, maxMs = Number.MAX_SAFE_INTEGER): UnitResult<number> => {
  const us = parseDurationUs(text);
  if (!us.ok) return us;
  if (us.value % 1000 !== 0) return fail(`'${text}' is not a whole number of milliseconds`);
  const ms = us.value / 1000;
  return ms > maxMs ? fail(`'${text}' is too long: at most ${formatDurationMs(maxMs)}`) : ok(ms);
};

export const bareDurationHint = (n: unknown): string =>
  `add a unit: '${String(n)}ms', '${String(n)}s' or '${String(n)}h' (a bare number is ambiguous)`;

const DURATION_FORMAT_ORDER: readonly (readonly [string, bigint])[] = [
  ['d', DURATION_UNITS_US.d],
  ['h', DURATION_UNITS_US.h],
  ['m', DURATION_UNITS_US.m],
  ['s', DURATION_UNITS_US.s],
  ['ms', DURATION_UNITS_US.ms],
  ['us', 1n],
];

/** Canonical text for microseconds: compound, largest unit first (`1h30m`, `2ms`, `250us`). */
export const formatDurationUs = (us: number): string => {
  if (us === 0) return '0s';
  let rest = BigInt(us);
  let out = '';
  for (const [unit, factor] of DURATION_FORMAT_ORDER) {
    const q = rest / factor;
    if (q > 0n) {
      out += `${q}${unit}`;
      rest -= q * factor;
    }
  }
  return out;
};

export const formatDurationMs = (ms: number): string => formatDurationUs(ms * 1000);

/** Durations for people: `2 h`, `1 h 30 min`, `0.5 ms`. */
export const describeDurationUs = (us: number): string => {
  if (us < 1000) return `${us} µs`;
  if (us < 1_000_000 && us % 1000 !== 0) return `${us / 1000} ms`;
  return formatDurationUs(us)
    .replace(/(\d+)([a-z]+)/g, (_: string, n: string, u: string) => `${n} ${u === 'm' ? 'min' : u} `)
    .trim();
};

// ---------------------------------------------------------------------------------------------------
// CPU (millicores) and money (minor units)

/** Cores (`0.5`, `4`) → millicores, exactly; at most three decimals. */
export const parseCores = (cores: number): UnitResult<number> => {
  const milli = Math.round(cores * 1000);
  if (Math.abs(cores * 1000 - milli) > 1e-6) return fail(`${cores} cores is finer than a millicore`);
  return ok(milli);
};

export const MONEY_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)?$';

/** `"2.50"` with 6 decimals → `2500000n`. Refuses more fractional digits than the asset has. */
export const parseMoney = (text: string, decimals: number): UnitResult<bigint> => {
  const m = DECIMAL.exec(text);
  if (!m) return fail(`invalid amount '${text}' — write a decimal number as a string, e.g. "2.50"`);
  const fraction = m[2] ?? '';
  if (fraction.replace(/0+$/, '').length > decimals) {
    return fail(`'${text}' has more than ${decimals} decimal places, the asset's precision`);
  }
  return ok(scaleDecimal(text, 10n ** BigInt(decimals))!);
};

/** Minor units back to a decimal string: `2500000n`, 6 → `"2.5"`. */
export const formatMoney = (minor: bigint, decimals: number): string => {
  if (decimals === 0) return minor.toString();
  const s = minor.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const fraction = s.slice(s.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
};
