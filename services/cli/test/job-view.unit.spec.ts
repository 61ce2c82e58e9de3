import { describe, expect, it } from 'vitest';
import { checkResponse } from '../src/app/api/responses';
import { describeJob } from '../src/app/commands/job/job-view';
import { jobFixture } from './fixtures';

const EDGE = `U${'A'.repeat(55)}`;

describe('gpunet job get', () => {
  const job = jobFixture({
    status: 'failed',
    disputes: [
      {
        providerId: EDGE,
        attempt: 1,
        rank: 0,
        edgeSeconds: 240,
        observedSeconds: 120,
        paidSeconds: 120,
        at: '2030-01-01T00:01:00.000Z',
      },
    ],
    faults: [
      {
        providerId: EDGE,
        kind: 'host-lost',
        verified: true,
        billableGpuSeconds: 120,
        detail: 'rank 0 (attempt 1) last heard of at 2030-01-01T00:00:30.000Z',
      },
    ],
  });

  it('prints each usage dispute and fault with its evidence', () => {
    const text = describeJob(job);
    expect(text).toMatch(
      /disputed {3}rank 0 \(attempt 1\) on \S+: edge claimed 240\.0s, observed 120\.0s, paid 120\.0s/,
    );
    expect(text).toMatch(
      /fault {6}host-lost by \S+ \(verified; billable .+\): rank 0 \(attempt 1\) last heard of at/,
    );
  });

  it('the gateway’s Job carries them (and a view recorded before them is still a Job)', () => {
    expect(checkResponse('Job', job)).toEqual({ ok: true, value: expect.anything() });
    const { disputes: _d, faults: _f, ...older } = job;
    expect(checkResponse('Job', older).ok).toBe(true);
    expect(describeJob(older)).not.toMatch(/disputed|fault/);
  });
});
