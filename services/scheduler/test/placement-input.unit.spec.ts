import { createSnapshot, scheduleGang } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/app/scheduler.config';
import {
  candidateRequirement,
  classLabel,
  gangRequestFor,
  placedAllocations,
  snapshotInput,
} from '../src/domain/placement-input';
import { candidate, edgeId, fundedJob } from './support/fixtures';

describe('placement input', () => {
  it('names GPUs by the job class they match, so the core’s model filter compares like with like', () => {
    expect(classLabel('H100-80GB')).toBe('H100 80GB');
    const input = snapshotInput([candidate(edgeId('A'), 2)], ['H100-80GB']);
    expect(input.providers[0]!.hosts[0]!.gpus.map((g) => g.model)).toEqual(['H100 80GB', 'H100 80GB']);
    expect(input.providers[0]!.policy.pricePerGpuHourMinor).toEqual({ 'H100 80GB': 2_000_000 });
    expect(gangRequestFor(fundedJob()).models).toEqual(['H100 80GB']);
    expect(candidateRequirement(fundedJob({ gpus: 3 }))).toMatchObject({ count: 3, models: ['H100 80GB'] });
  });

  it('a GPU id two providers claim goes to the first only: the snapshot stays valid', () => {
    const a = candidate(edgeId('A'), 2);
    const b = { ...candidate(edgeId('B'), 2), gpus: a.gpus };
    const input = snapshotInput([a, b], ['H100-80GB']);
    expect(input.providers.map((p) => p.hosts[0]!.gpus.length)).toEqual([2, 0]);
    expect(() => createSnapshot(input)).not.toThrow();
  });

  it('GPUs held by another job’s round in flight are not offered; the job’s own are', () => {
    const a = candidate(edgeId('A'), 2);
    const held = new Map([[a.gpus[0]!.uuid, 'other-job']]);
    const gpus = snapshotInput([a], ['H100-80GB'], held, 'job-1').providers[0]!.hosts[0]!.gpus;
    expect(gpus.map((g) => g.reservedBy)).toEqual(['other-job', null]);
    const r = scheduleGang(
      createSnapshot(snapshotInput([a], ['H100-80GB'], held, 'job-1')),
      'job-1',
      gangRequestFor(fundedJob({ gpus: 2 })),
      { seed: 1 },
    );
    expect(r.code).not.toBe('Success');
  });

  it('a placement becomes job.placed allocations with one reservation per node', () => {
    const r = scheduleGang(
      createSnapshot(snapshotInput([candidate(edgeId('A'), 2), candidate(edgeId('B'), 2)], ['H100-80GB'])),
      'job-1',
      gangRequestFor(fundedJob({ gpus: 4 })),
      { seed: 1 },
    );
    if (r.code !== 'Success') throw new Error(r.message);
    const allocations = placedAllocations(r.placement, (_p, i) => `res-${i}`);
    expect(allocations).toHaveLength(1);
    expect(allocations[0]!.nodes.map((n) => n.reservationId)).toEqual(['res-0', 'res-1']);
    expect(allocations[0]!.nodes.flatMap((n) => n.gpuUuids)).toHaveLength(4);
    expect(allocations[0]!.pricePerHourMinor).toBe('8000000');
  });

  it('reads its configuration from the environment', () => {
    expect(configFromEnv({ DATABASE_URL: 'postgres://x/y' })).toMatchObject({
      schema: 'scheduler',
      reservationDeadlineMs: 5_000,
      maxAttempts: 5,
    });
    expect(configFromEnv({ DATABASE_URL: 'postgres://x/y' }).maxWaitMs).toBe(3_600_000);
    expect(configFromEnv({ DATABASE_URL: 'postgres://x/y', MAX_QUEUE_WAIT_MS: '60000' }).maxWaitMs).toBe(
      60_000,
    );
    expect(() => configFromEnv({ DATABASE_URL: 'postgres://x/y', MAX_QUEUE_WAIT_MS: '3000000000' })).toThrow(
      /MAX_QUEUE_WAIT_MS/,
    );
    expect(() => configFromEnv({})).toThrow(/DATABASE_URL/);
    expect(() => configFromEnv({ DATABASE_URL: 'postgres://x/y', RESERVATION_DEADLINE_MS: '-1' })).toThrow(
      /RESERVATION_DEADLINE_MS/,
    );
    // The namespace comes from the variable every service reads (a cluster's services share it).
    expect(configFromEnv({ DATABASE_URL: 'postgres://x/y', SUBJECT_PREFIX: 'ns1' }).prefix).toBe('ns1');
  });
});
