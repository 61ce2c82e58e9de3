import { mulberry32 } from '@gpunet/netcoord';
import { describe, expect, it } from 'vitest';
import {
  type BenchmarkSchedulePolicy,
  dueBenchmarks,
  type ProviderScheduleView,
} from '../src/domain/benchmark-schedule';

const DAY = 24 * 3600_000;
const NOW = Date.parse('2030-01-10T00:00:00Z');
const policy: BenchmarkSchedulePolicy = {
  renewBeforeMs: DAY,
  spotCheckProbability: 0,
  spotCheckMinIntervalMs: DAY,
  retryAfterMs: 600_000,
  maxPerSweep: 10,
  allowWhileBusy: false,
};
const view = (providerId: string, over: Partial<ProviderScheduleView> = {}): ProviderScheduleView => ({
  providerId,
  online: true,
  busy: false,
  inventoryChangedAtMs: null,
  lastProfile: { measuredAtMs: NOW - 2 * DAY, expiresAtMs: NOW + 5 * DAY },
  pending: false,
  lastRequestedAtMs: NOW - 2 * DAY,
  ...over,
});

describe('dueBenchmarks', () => {
  it.each<[string, Partial<ProviderScheduleView>, string | null]>([
    ['never measured', { lastProfile: null, lastRequestedAtMs: null }, 'initial'],
    ['hardware changed since the profile', { inventoryChangedAtMs: NOW - DAY }, 'inventory-changed'],
    [
      'profile expires within a day',
      { lastProfile: { measuredAtMs: NOW - 6 * DAY, expiresAtMs: NOW + DAY / 2 } },
      'expiring',
    ],
    ['profile fresh', {}, null],
    ['offline', { lastProfile: null, online: false }, null],
    ['a request is out', { lastProfile: null, pending: true }, null],
    ['busy with a job', { lastProfile: null, busy: true }, null],
    ['asked a minute ago (backing off)', { lastProfile: null, lastRequestedAtMs: NOW - 60_000 }, null],
  ])('%s → %s', (_name, over, reason) => {
    const due = dueBenchmarks([view('p', over)], NOW, mulberry32(1), policy);
    expect(due).toEqual(reason === null ? [] : [{ providerId: 'p', reason }]);
  });

  it('benchmarks busy providers when the policy allows it', () => {
    expect(
      dueBenchmarks([view('p', { lastProfile: null, busy: true })], NOW, mulberry32(1), {
        ...policy,
        allowWhileBusy: true,
      }),
    ).toEqual([{ providerId: 'p', reason: 'initial' }]);
  });

  it('spot-checks a random share of providers, no sooner than the minimum interval, deterministically per seed', () => {
    const views = Array.from({ length: 200 }, (_, i) => view(`p${String(i).padStart(3, '0')}`));
    const spot = { ...policy, spotCheckProbability: 0.1, maxPerSweep: 1000 };
    const due = dueBenchmarks(views, NOW, mulberry32(7), spot);
    expect(due.every((d) => d.reason === 'spot-check')).toBe(true);
    expect(due.length).toBeGreaterThan(8);
    expect(due.length).toBeLessThan(40);
    expect(dueBenchmarks(views, NOW, mulberry32(7), spot)).toEqual(due);
    const recent = views.map((v) => ({ ...v, lastRequestedAtMs: NOW - 3600_000 }));
    expect(dueBenchmarks(recent, NOW, mulberry32(7), spot)).toEqual([]);
  });

  it('serves the most urgent first and at most maxPerSweep', () => {
    const due = dueBenchmarks(
      [
        view('a', { lastProfile: { measuredAtMs: NOW - 6 * DAY, expiresAtMs: NOW } }),
        view('b', { inventoryChangedAtMs: NOW - 1 }),
        view('c', { lastProfile: null }),
      ],
      NOW,
      mulberry32(1),
      { ...policy, maxPerSweep: 2 },
    );
    expect(due).toEqual([
      { providerId: 'c', reason: 'initial' },
      { providerId: 'b', reason: 'inventory-changed' },
    ]);
  });
});
