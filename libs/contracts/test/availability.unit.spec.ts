import { describe, expect, it } from 'vitest';
import { type AvailabilityWindow, availableUntil, weeklyCoverage } from '../src';

/** The definition, computed the slow way: a fresh formatter and a walk over the minutes. */
const reference = (
  availability: { timeZone: string; windows: readonly AvailabilityWindow[] },
  atMs: number,
): number | 'always' | null => {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: availability.timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(atMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday'));
  const start = day * 1440 + (Number(get('hour')) % 24) * 60 + Number(get('minute'));
  const covered = weeklyCoverage(availability.windows);
  if (!covered[start]) return null;
  let minutes = 0;
  while (minutes < covered.length && covered[(start + minutes) % covered.length]) minutes++;
  if (minutes === covered.length) return 'always';
  return atMs - (((atMs % 60_000) + 60_000) % 60_000) + minutes * 60_000;
};

/** mulberry32, so every run checks the same cases. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

describe('availableUntil (remembered coverage and formatters)', () => {
  it('agrees with the definition on random windows, time zones and instants, across midnight and the week’s end', () => {
    const random = seeded(20301201);
    const int = (n: number) => Math.floor(random() * n);
    const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
    const hhmm = (m: number) =>
      `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Adelaide'];
    for (let c = 0; c < 300; c++) {
      const windows: AvailabilityWindow[] = Array.from({ length: 1 + int(3) }, () => ({
        days: days.filter(() => random() < 0.5),
        from: hhmm(int(24 * 4) * 15),
        to: random() < 0.1 ? '24:00' : hhmm(int(24 * 4) * 15),
      }));
      const availability = { timeZone: zones[int(zones.length)]!, windows };
      // Around a daylight-saving change (31 March 2030 in Europe) and anywhere in a year.
      for (const atMs of [
        Date.parse('2030-03-31T00:30:00Z') + int(180) * 60_000,
        Date.parse('2030-01-01T00:00:00Z') + int(365 * 1440) * 60_000 + int(60_000),
      ])
        expect(availableUntil(availability, atMs), JSON.stringify({ availability, atMs })).toBe(
          reference(availability, atMs),
        );
    }
  });

  it('answers the same when asked again (a remembered minute, a remembered coverage)', () => {
    const windows: AvailabilityWindow[] = [{ days: ['sun', 'mon'], from: '22:00', to: '02:00' }];
    const availability = { timeZone: 'Europe/Berlin', windows };
    const sundayNight = Date.parse('2030-01-06T21:30:00Z'); // Sunday 22:30 in Berlin
    const first = availableUntil(availability, sundayNight);
    expect(new Date(first as number).toISOString()).toBe('2030-01-07T01:00:00.000Z');
    expect(availableUntil(availability, sundayNight)).toBe(first);
    expect(availableUntil(availability, sundayNight + 4 * 3_600_000)).toBeNull();
  });
});
