import type { Collector } from './collector';
import type { Location, LocationMatch } from './normalized.schema';
import { CONTINENT_NAMES, CONTINENTS, type LocationSource } from './source.schema';
import type { z } from 'zod';

type LocationSourceSpec = z.output<typeof LocationSource>;
type Continent = (typeof CONTINENTS)[number];

const matchKey = (m: LocationMatch): string => JSON.stringify(m);

const normalizeContinent = (c: string): Continent => {
  const upper = c.toUpperCase();
  if ((CONTINENTS as readonly string[]).includes(upper)) return upper as Continent;
  return CONTINENT_NAMES[c.toLowerCase()]!;
};

/** Canonical location: codes upper-cased, entries de-duplicated and sorted. */
export const normalizeLocation = (
  src: LocationSourceSpec | undefined,
  path: readonly PropertyKey[],
  c: Collector,
): Location => {
  const side = (entries: LocationSourceSpec['accept'], which: 'accept' | 'reject'): LocationMatch[] => {
    const byKey = new Map<string, LocationMatch>();
    (entries ?? []).forEach((e, i) => {
      const m: LocationMatch = {
        continent: e.continent === undefined ? null : normalizeContinent(e.continent),
        country: e.country === undefined ? null : e.country.toUpperCase(),
        city: e.city === undefined ? null : e.city.trim(),
        asn:
          e.asn === undefined ? null : typeof e.asn === 'number' ? e.asn : Number(e.asn.replace(/^as/i, '')),
        isp: e.isp === undefined ? null : e.isp.trim(),
      };
      if (Object.values(m).every((v) => v === null)) {
        c.error(
          [...path, which, i],
          'MISSING_FIELD',
          'a location entry needs at least one of continent, country, city, asn, isp',
        );
        return;
      }
      if (m.asn !== null && m.asn > 4_294_967_295) {
        c.error([...path, which, i, 'asn'], 'OUT_OF_RANGE', 'asn must be at most 4294967295');
        return;
      }
      if (m.city === '' || m.isp === '') {
        c.error([...path, which, i], 'INVALID_VALUE', 'city and isp must not be blank');
        return;
      }
      for (const key of ['asn', 'isp'] as const)
        if (m[key] !== null)
          c.error(
            [...path, which, i, key],
            'NOT_SUPPORTED',
            `not honoured yet: no provider reports its ${key === 'asn' ? 'network (AS number)' : 'network operator'}, so ${which === 'accept' ? 'the entry could match no provider' : 'the entry would reject none'}; use continent, country or city`,
          );
      byKey.set(matchKey(m), m);
    });
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, m]) => m);
  };
  const accept = side(src?.accept, 'accept');
  const reject = side(src?.reject, 'reject');
  const rejected = new Set(reject.map(matchKey));
  accept.forEach((m) => {
    if (rejected.has(matchKey(m))) {
      c.error(
        [...path, 'reject'],
        'CONFLICT',
        `the same location is both accepted and rejected: ${describeMatch(m)}`,
      );
    }
  });
  return { accept, reject };
};

export const describeMatch = (m: LocationMatch): string =>
  [
    m.city,
    m.country,
    m.continent === null ? null : `continent ${m.continent}`,
    m.asn === null ? null : `AS${m.asn}`,
    m.isp === null ? null : `ISP ${m.isp}`,
  ]
    .filter((p) => p !== null)
    .join(', ');
