import { describe, expect, it } from 'vitest';
import { changedCoordinates, COORDINATE_CHANGE, type HostCoordinate } from '../src/domain/network-estimate';

const at = (hostId: string, over: Partial<HostCoordinate> = {}): HostCoordinate => ({
  hostId,
  x: 1_000,
  y: 2_000,
  height: 100,
  error: 0.3,
  siteId: hostId,
  ...over,
});

describe('changedCoordinates: the hosts a refit announces', () => {
  const previous = new Map([['h1', at('h1')]]);
  it.each([
    { name: 'a host the last fit did not have', next: at('h2'), announced: true },
    { name: 'the same coordinate', next: at('h1'), announced: false },
    {
      name: 'moved less than the threshold (noise)',
      next: at('h1', { x: 1_000 + COORDINATE_CHANGE.movedUs - 1 }),
      announced: false,
    },
    {
      name: 'moved by the threshold in the plane',
      next: at('h1', { y: 2_000 + COORDINATE_CHANGE.movedUs }),
      announced: true,
    },
    {
      name: 'its height grew by the threshold',
      next: at('h1', { height: 100 + COORDINATE_CHANGE.movedUs }),
      announced: true,
    },
    {
      // 0.25 is not exactly 0.3 − 0.05 in floating point: a clear margin.
      name: 'its error changed by more than the threshold',
      next: at('h1', { error: 0.3 - COORDINATE_CHANGE.error - 0.01 }),
      announced: true,
    },
    { name: 'its error changed a little', next: at('h1', { error: 0.31 }), announced: false },
    { name: 'another same-site group', next: at('h1', { siteId: 'h0' }), announced: true },
  ])('$name', (c) => {
    expect(changedCoordinates(previous, [c.next])).toEqual(c.announced ? [c.next] : []);
  });
});
