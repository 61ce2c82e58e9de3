import type { AvailabilityWindow } from '@gpunet/contracts';

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

/** Minute of the week of `atMs` as a wall clock in `timeZone` shows it. */
export const minuteOfWeek = (atMs: number, timeZone: string): number => {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(atMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = WEEKDAY[get('weekday') as keyof typeof WEEKDAY] ?? 0;
  return day * 1440 + (Number(get('hour')) % 24) * 60 + Number(get('minute'));
};

/**
 * Until when the provider is available without a break, starting at `atMs`: `null` when not available
 * at `atMs`, `'always'` when the windows cover the whole week, else the instant the current stretch
 * of windows ends. The time zone's offset at `atMs` is used for the whole stretch (a daylight-saving
 * change during a job shifts its end by that hour).
 */
export const availableUntil = (
  availability: { readonly timeZone: string; readonly windows: readonly AvailabilityWindow[] } | null,
  atMs: number,
): number | 'always' | null => {
  if (availability === null) return 'always';
  const covered = weeklyCoverage(availability.windows);
  const start = minuteOfWeek(atMs, availability.timeZone);
  if (!covered[start]) return null;
  let minutes = 0;
  while (minutes < WEEK_MINUTES && covered[(start + minutes) % WEEK_MINUTES]) minutes++;
  if (minutes === WEEK_MINUTES) return 'always';
  const intoMinute = ((atMs % MINUTE_MS) + MINUTE_MS) % MINUTE_MS;
  return atMs - intoMinute + minutes * MINUTE_MS;
};
