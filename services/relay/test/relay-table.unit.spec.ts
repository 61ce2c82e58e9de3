import { describe, expect, it } from 'vitest';
import { RelayTable } from '../src/domain/relay-table';

const unlimited = { jobRateBytesPerSec: 0, jobBurstBytes: 0 };

describe('RelayTable', () => {
  it.each([
    { name: 'to a member of the same job', from: 1, to: 'b1', expected: { kind: 'forward', to: 2 } },
    { name: 'to a key of another job', from: 1, to: 'c1', expected: { kind: 'drop', reason: 'other-job' } },
    {
      name: 'to a key nobody connected',
      from: 1,
      to: 'ff',
      expected: { kind: 'drop', reason: 'no-such-peer' },
    },
    {
      name: 'from a connection that never joined',
      from: 9,
      to: 'b1',
      expected: { kind: 'drop', reason: 'no-such-peer' },
    },
  ])('routes a packet $name', ({ from, to, expected }) => {
    const table = new RelayTable(unlimited);
    table.join(1, 'job-a', 'a1', undefined, 0);
    table.join(2, 'job-a', 'b1', undefined, 0);
    table.join(3, 'job-c', 'c1', undefined, 0);
    expect(table.route(from, to, 100, 0)).toEqual(expected);
  });

  it('accounts forwarded and dropped traffic per job', () => {
    const table = new RelayTable(unlimited);
    table.join(1, 'job-a', 'a1', undefined, 0);
    table.join(2, 'job-a', 'b1', undefined, 0);
    table.join(3, 'job-c', 'c1', undefined, 0);
    table.route(1, 'b1', 100, 0);
    table.route(2, 'a1', 50, 0);
    table.route(1, 'c1', 10, 0);
    table.route(2, 'b1', 70, 0);
    table.droppedAfterRouting(2, 70);
    expect(table.accounts().get('job-a')).toEqual({
      forwardedPackets: 2,
      forwardedBytes: 150,
      members: 2,
      dropped: { 'other-job': 1, 'no-such-peer': 0, 'rate-limited': 0, 'queue-full': 1 },
    });
  });

  it("applies the smaller of the relay's and the admitted rate", () => {
    const table = new RelayTable({ jobRateBytesPerSec: 1_000_000, jobBurstBytes: 0 });
    table.join(1, 'job-a', 'a1', 1_000, 0);
    table.join(2, 'job-a', 'b1', undefined, 0);
    // 64 KiB burst, then 1 000 bytes per second.
    expect(table.route(1, 'b1', 65_536, 0)).toEqual({ kind: 'forward', to: 2 });
    expect(table.route(1, 'b1', 1_000, 0)).toEqual({ kind: 'drop', reason: 'rate-limited' });
    expect(table.route(1, 'b1', 1_000, 1_000)).toEqual({ kind: 'forward', to: 2 });
  });

  it('hands a key to its newest connection, and forgets a connection that closed', () => {
    const table = new RelayTable(unlimited);
    table.join(1, 'job-a', 'a1', undefined, 0);
    table.join(2, 'job-a', 'b1', undefined, 0);
    expect(table.join(3, 'job-a', 'b1', undefined, 0)).toEqual({ replaced: 2 });
    expect(table.route(1, 'b1', 1, 0)).toEqual({ kind: 'forward', to: 3 });
    table.leave(2, 0);
    expect(table.route(1, 'b1', 1, 0)).toEqual({ kind: 'forward', to: 3 });
    table.leave(3, 0);
    expect(table.route(1, 'b1', 1, 0)).toEqual({ kind: 'drop', reason: 'no-such-peer' });
  });

  it('prunes jobs that have been empty for the retention time', () => {
    const table = new RelayTable(unlimited);
    table.join(1, 'job-a', 'a1', undefined, 0);
    table.leave(1, 1_000);
    expect(table.prune(5_000, 10_000)).toEqual([]);
    expect(table.prune(11_000, 10_000)).toEqual(['job-a']);
    expect(table.accounts().size).toBe(0);
  });
});
