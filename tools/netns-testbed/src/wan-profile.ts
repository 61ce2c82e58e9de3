/**
 * What one direction of a WAN path does to the IP packets on it. Every field is optional; an empty
 * profile is a perfect link. Enforced by the user-space forwarder (`scripts/wan-forwarder.py`).
 */
export interface LinkProfile {
  /** One-way delay in ms, added in each direction: a pair's RTT is twice this. Default 0. */
  readonly delayMs?: number;
  /** Each packet's delay is `delayMs ± jitterMs` (uniform, seeded); at most `delayMs`. Default 0. */
  readonly jitterMs?: number;
  /**
   * Let jitter reorder packets. Default `false`: a packet never leaves before an earlier one of its
   * direction (its delivery waits for the previous one's). Needs `jitterMs` > 0.
   */
  readonly reorder?: boolean;
  /** Share of packets dropped, 0–100 (seeded PRNG, drawn per packet). Default 0. */
  readonly lossPct?: number;
  /** Bandwidth cap in bits per second of IP packets (headers included). Default: none. */
  readonly rateBps?: number;
  /** Packets the rate's queue holds; an arrival beyond is dropped. Needs `rateBps`. Default 1 000. */
  readonly queuePackets?: number;
}

/**
 * One pair of endpoints of the WAN — site names (their NAT router, or every host of a `nat: 'none'`
 * site) or public host names. The profile applies both ways unless `bToA` gives the way back its own
 * (complete, not merged).
 */
export interface WanPair extends LinkProfile {
  readonly a: string;
  readonly b: string;
  readonly bToA?: LinkProfile;
}

export interface WanSpec {
  /** Seed of the loss and jitter draws (each direction draws from its own stream). Default 1. */
  readonly seed?: number;
  /** The profile of every pair that `pairs` does not list. Default: a perfect link. */
  readonly default?: LinkProfile;
  readonly pairs?: readonly WanPair[];
}

/** One direction, as the forwarder takes it. */
export interface WanDirection {
  readonly from: string;
  readonly to: string;
  readonly profile: LinkProfile;
}

/** A WAN spec or profile the emulator cannot honour; `field` is its path (`wan.pairs[0].lossPct`). */
export class WanProfileError extends Error {
  override readonly name = 'WanProfileError';
  readonly code = 'INVALID_WAN_PROFILE' as const;
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

const PROFILE_FIELDS = new Set(['delayMs', 'jitterMs', 'reorder', 'lossPct', 'rateBps', 'queuePackets']);
const PAIR_FIELDS = new Set([...PROFILE_FIELDS, 'a', 'b', 'bToA']);
const SPEC_FIELDS = new Set(['seed', 'default', 'pairs']);
/** A minute one way: beyond any path on Earth, and beyond what a test should wait for. */
const MAX_DELAY_MS = 60_000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const rejectUnknown = (value: Record<string, unknown>, known: Set<string>, field: string): void => {
  for (const key of Object.keys(value))
    if (!known.has(key)) throw new WanProfileError(`${field}.${key}`, 'unknown field');
};

const number = (
  value: Record<string, unknown>,
  key: string,
  field: string,
  check: (n: number) => boolean,
  expected: string,
): number | undefined => {
  const n = value[key];
  if (n === undefined) return undefined;
  if (typeof n !== 'number' || !Number.isFinite(n) || !check(n))
    throw new WanProfileError(`${field}.${key}`, `must be ${expected} (got ${JSON.stringify(n)})`);
  return n;
};

/** Checks one profile; returns it with only its known fields. */
export const validateLinkProfile = (value: unknown, field: string): LinkProfile => {
  if (!isRecord(value)) throw new WanProfileError(field, 'must be an object');
  rejectUnknown(value, PROFILE_FIELDS, field);
  const delayMs = number(
    value,
    'delayMs',
    field,
    (n) => n >= 0 && n <= MAX_DELAY_MS,
    'a number of ms from 0 to 60000',
  );
  const jitterMs = number(value, 'jitterMs', field, (n) => n >= 0, 'a number of ms ≥ 0');
  const lossPct = number(value, 'lossPct', field, (n) => n >= 0 && n <= 100, 'a number from 0 to 100');
  const rateBps = number(value, 'rateBps', field, (n) => n > 0, 'a number of bits per second > 0');
  const queuePackets = number(
    value,
    'queuePackets',
    field,
    (n) => Number.isInteger(n) && n >= 1,
    'an integer ≥ 1',
  );
  const reorder = value['reorder'];
  if (reorder !== undefined && typeof reorder !== 'boolean')
    throw new WanProfileError(`${field}.reorder`, `must be a boolean (got ${JSON.stringify(reorder)})`);
  if ((jitterMs ?? 0) > (delayMs ?? 0))
    throw new WanProfileError(
      `${field}.jitterMs`,
      `must not exceed delayMs (${delayMs ?? 0}): a packet cannot leave before it arrived`,
    );
  if (queuePackets !== undefined && rateBps === undefined)
    throw new WanProfileError(
      `${field}.queuePackets`,
      'needs rateBps: only the rate queue holds packets, so it would be ignored',
    );
  if (reorder === true && !(jitterMs !== undefined && jitterMs > 0))
    throw new WanProfileError(`${field}.reorder`, 'needs jitterMs > 0: only jitter can reorder packets');
  return {
    ...(delayMs !== undefined ? { delayMs } : {}),
    ...(jitterMs !== undefined ? { jitterMs } : {}),
    ...(reorder !== undefined ? { reorder } : {}),
    ...(lossPct !== undefined ? { lossPct } : {}),
    ...(rateBps !== undefined ? { rateBps } : {}),
    ...(queuePackets !== undefined ? { queuePackets } : {}),
  };
};

/** Checks one pair against the WAN's endpoints; returns its two directions. */
export const validateWanPair = (
  value: unknown,
  endpoints: ReadonlySet<string>,
  field: string,
): WanDirection[] => {
  if (!isRecord(value)) throw new WanProfileError(field, 'must be an object');
  rejectUnknown(value, PAIR_FIELDS, field);
  const { a: _a, b: _b, bToA, ...profile } = value;
  const endpoint = (end: 'a' | 'b'): string => {
    const name = value[end];
    if (typeof name !== 'string' || !endpoints.has(name))
      throw new WanProfileError(
        `${field}.${end}`,
        `must name a site or public host of this internet (${[...endpoints].join(', ')}; got ${JSON.stringify(name)})`,
      );
    return name;
  };
  const a = endpoint('a');
  const b = endpoint('b');
  if (a === b)
    throw new WanProfileError(
      `${field}.b`,
      `must differ from a (${a}): a site's own traffic is never delayed`,
    );
  const forward = validateLinkProfile(profile, field);
  const back = bToA === undefined ? forward : validateLinkProfile(bToA, `${field}.bToA`);
  return [
    { from: a, to: b, profile: forward },
    { from: b, to: a, profile: back },
  ];
};

/** Checks a whole WAN spec; returns its seed, default and every listed direction. */
export const validateWanSpec = (
  value: unknown,
  endpoints: ReadonlySet<string>,
  field = 'wan',
): { seed: number; default: LinkProfile; directions: WanDirection[] } => {
  if (!isRecord(value)) throw new WanProfileError(field, 'must be an object');
  rejectUnknown(value, SPEC_FIELDS, field);
  const seed = number(value, 'seed', field, Number.isSafeInteger, 'a safe integer') ?? 1;
  const fallback =
    value['default'] === undefined ? {} : validateLinkProfile(value['default'], `${field}.default`);
  const pairs = value['pairs'] ?? [];
  if (!Array.isArray(pairs)) throw new WanProfileError(`${field}.pairs`, 'must be an array');
  const seen = new Set<string>();
  const directions: WanDirection[] = [];
  for (const [i, pair] of pairs.entries()) {
    const both = validateWanPair(pair, endpoints, `${field}.pairs[${i}]`);
    const key = [both[0]!.from, both[0]!.to].sort().join('\0');
    if (seen.has(key))
      throw new WanProfileError(
        `${field}.pairs[${i}]`,
        `lists ${both[0]!.from}–${both[0]!.to} again (a pair is listed once; bToA gives its way back)`,
      );
    seen.add(key);
    directions.push(...both);
  }
  return { seed, default: fallback, directions };
};
