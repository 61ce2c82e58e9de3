import type { AvailabilityWindow } from './policy.schemas';

/*
 * Availability windows: the edge checks them on every reservation, discovery when it proposes GPUs.
 */
const DAY_INDEX = { mon: 0, tue: 1, wed: 2, thu: 3, fri: 4, sat: 5, sun: 6 } as const;
const WEEK_MINUTES = 7 * 1440;
const MINUTE_MS = 60_000;

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Which minutes of the week (Monday 00:00 = 0) the windows cover. */
export const weeklyCoverage = (windows: readonly AvailabilityWindow[]): Uint8Array => {
  const covered = new Uint8Array(WEEK_MINUTES);
  for (const w of windows) {
    const from = minutesOf(w.from);
    const to = w.to === '24:00' ? 1440 : minutesOf(w.to);
    for (const day of w.days) {
      const start = DAY_INDEX[day] * 1440 + from;
      const end = DAY_INDEX[day] * 1440 + (to > from ? to : to + 1440);
      for (let m = start; m < end; m++) covered[m % WEEK_MINUTES] = 1;
    }
  }
  return covered;
};

const WEEKDAY = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 } as const;

/*
 * Discovery evaluates availability for every candidate provider of every query (thousands a second):
 * an `Intl.DateTimeFormat` costs tens of µs to build and a week's coverage ten thousand writes, so
 * both are built once — a formatter per time zone, the coverage and its stretches per windows array
 * (the same array object for as long as a provider's policy is unchanged) — and the minute of the
 * week is remembered per time zone and minute.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    if (formatters.size < 1_000) formatters.set(timeZone, formatter);
  }
  return formatter;
};
const minutesOfWeek = new Map<string, number>();

/** Minute of the week of `atMs` as a wall clock in `timeZone` shows it. */
export const minuteOfWeek = (atMs: number, timeZone: string): number => {
  const key = `${Math.floor(atMs / MINUTE_MS)} ${timeZone}`;
  const known = minutesOfWeek.get(key);
  if (known !== undefined) return known;
  const parts = formatterFor(timeZone).formatToParts(new Date(atMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = WEEKDAY[get('weekday') as keyof typeof WEEKDAY] ?? 0;
  const minute = day * 1440 + (Number(get('hour')) % 24) * 60 + Number(get('minute'));
  if (minutesOfWeek.size >= 4_096) minutesOfWeek.clear();
  minutesOfWeek.set(key, minute);
  return minute;
};

/**
 * For each minute of the week, how many minutes from it on the windows cover without a break
 * (`WEEK_MINUTES` everywhere when they cover the whole week; 0 where they do not cover it).
 */
const coveredStretches = (covered: Uint8Array): Uint16Array => {
  const stretch = new Uint16Array(WEEK_MINUTES);
  if (covered.every((c) => c === 1)) return stretch.fill(WEEK_MINUTES);
  // Twice around the week backwards, so a stretch that wraps past Sunday midnight is counted whole.
  for (let m = 2 * WEEK_MINUTES - 1; m >= 0; m--) {
    const i = m % WEEK_MINUTES;
    stretch[i] = covered[i] ? stretch[(i + 1) % WEEK_MINUTES]! + 1 : 0;
  }
  return stretch;
};
const stretches = new WeakMap<readonly AvailabilityWindow[], Uint16Array>();
const stretchesOf = (windows: readonly AvailabilityWindow[]): Uint16Array => {
  let s = stretches.get(windows);
  if (s === undefined) {
    s = coveredStretches(weeklyCoverage(windows));
    stretches.set(windows, s);
  }
  return s;
};

/**
 * Until when the provider is available without a break, starting at `atMs`: `null` when not available
 * at `atMs`, `'always'` when the windows cover the whole week, else the instant the current stretch
 * of windows ends. The time zone's offset at `atMs` is used for the whole stretch (a daylight-saving
 * change during a job shifts its end by that hour). The windows array must not be mutated once passed
 * (what it covers is remembered per array).
 */
export const availableUntil = (
  availability: { readonly timeZone: string; readonly windows: readonly AvailabilityWindow[] } | null,
  atMs: number,
): number | 'always' | null => {
  if (availability === null) return 'always';
  const minutes = stretchesOf(availability.windows)[minuteOfWeek(atMs, availability.timeZone)]!;
  if (minutes === 0) return null;
  if (minutes === WEEK_MINUTES) return 'always';
  const intoMinute = ((atMs % MINUTE_MS) + MINUTE_MS) % MINUTE_MS;
  return atMs - intoMinute + minutes * MINUTE_MS;
};
