import { describe, expect, it } from 'vitest';
import { backoffMs, reconnectWaitMs } from '../src/domain/backoff';

describe('backoff', () => {
  it('doubles up to the ceiling, with full jitter', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 0.999999))).toEqual([249, 499, 999, 1999]);
    expect(backoffMs(50, 0.999999)).toBe(29_999);
    expect(backoffMs(3, 0)).toBe(1);
  });

  it('waits longer the longer NATS has been gone, between 125 ms and 30 s', () => {
    expect(reconnectWaitMs(0, 0)).toBe(125);
    expect(reconnectWaitMs(0, 0.999999)).toBe(249);
    expect(reconnectWaitMs(40_000, 0.999999)).toBe(9_999);
    expect(reconnectWaitMs(3_600_000, 0)).toBe(15_000);
    expect(reconnectWaitMs(-5, 0.5)).toBe(187);
  });
});
