import { describe, expect, it } from 'vitest';
import { emptyQueue, enqueue, type FairQueue, markReady, park, takeNext } from '../src/domain/fair-queue';

const drain = (queue: FairQueue): string[] => {
  const order: string[] = [];
  let q = queue;
  for (let next = takeNext(q); next; next = takeNext(q)) {
    order.push(next.entry.jobId);
    q = next.queue;
  }
  return order;
};

describe('fair queue', () => {
  it('takes turns between tenants, FIFO within a tenant', () => {
    let q = emptyQueue;
    for (const [job, tenant] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['a3', 'A'],
      ['b1', 'B'],
      ['c1', 'C'],
      ['b2', 'B'],
    ] as const)
      q = enqueue(q, job, tenant);
    expect(drain(q)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('serves higher priority first', () => {
    let q = enqueue(emptyQueue, 'low', 'A', 0);
    q = enqueue(q, 'high', 'B', 5);
    expect(drain(q)).toEqual(['high', 'low']);
  });

  it('parked jobs wait for a capacity event', () => {
    let q = enqueue(enqueue(emptyQueue, 'a1', 'A'), 'b1', 'B');
    q = park(q, 'a1');
    expect(drain(q)).toEqual(['b1']);
    expect(drain(markReady(q))).toEqual(['a1', 'b1']);
  });

  it('enqueueing a job twice keeps one entry', () => {
    const q = enqueue(enqueue(emptyQueue, 'a1', 'A'), 'a1', 'A');
    expect(q.entries).toHaveLength(1);
  });
});
