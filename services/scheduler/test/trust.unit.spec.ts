import { DEFAULT_SUBNET_TRUST } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  type ChallengeFailureRow,
  gpuTrustOf,
  NO_MEASUREMENTS,
  type VerificationRow,
  verifiesMore,
} from '../src/domain/measurements';
import { snapshotInput } from '../src/domain/placement-input';
import { termsPlan } from '../src/domain/placement-plan';
import { candidate, edgeId, fundedJob } from './support/fixtures';

const P = edgeId('P');
const row = (
  statuses: Record<string, VerificationRow['gpus'][number]['status']>,
  over: Partial<VerificationRow> = {},
): VerificationRow => ({
  providerId: P,
  gpus: Object.entries(statuses).map(([uuid, status]) => ({ uuid, status })),
  cause: 'challenge-passed',
  challengeId: null,
  atMs: 0,
  ...over,
});

describe('a verification change wakes parked jobs only when it can make one placeable', () => {
  it.each([
    ['first report: pending', null, row({ g0: 'pending' }), false],
    ['first report: verified', null, row({ g0: 'verified' }), true],
    ['pending → verified', row({ g0: 'pending' }), row({ g0: 'verified' }), true],
    ['verified → unverified', row({ g0: 'verified' }), row({ g0: 'unverified' }), false],
    ['verified → verified (nothing new)', row({ g0: 'verified' }), row({ g0: 'verified' }), false],
    [
      'one of two newly verified',
      row({ g0: 'verified', g1: 'pending' }),
      row({ g0: 'verified', g1: 'verified' }),
      true,
    ],
    ['newly known simulated', null, row({ g0: 'simulated' }), true],
  ] as const)('%s → %s', (_name, before, after, wakes) => {
    expect(verifiesMore(before, after)).toBe(wakes);
  });
});

describe("an unverified GPU's note names the challenge that failed", () => {
  const failure: ChallengeFailureRow = {
    challengeId: 'c-7',
    providerId: P,
    gpuUuid: 'g0',
    kind: 'wrong-product',
    atMs: 0,
  };
  it.each([
    [
      'its own failure, with the kind',
      row({ g0: 'unverified' }),
      new Map([['g0', failure]]),
      'challenge c-7 failed (wrong-product)',
    ],
    [
      'the change’s challenge when it failed',
      row({ g0: 'unverified' }, { cause: 'challenge-failed', challengeId: 'c-8' }),
      new Map(),
      'challenge c-8 failed',
    ],
    ['nothing known', row({ g0: 'unverified' }, { cause: 'inventory-changed' }), new Map(), null],
  ] as const)('%s', (_name, r, failures, note) => {
    expect(gpuTrustOf('g0', r, failures)).toEqual({ verification: 'unverified', note });
  });

  it('a GPU the row does not name has no verification', () => {
    expect(gpuTrustOf('g9', row({ g0: 'verified' }), new Map())).toEqual({ verification: null, note: null });
  });
});

describe("the funded job's trust reaches discovery's query and the core's request", () => {
  it.each([
    ['refused', DEFAULT_SUBNET_TRUST, false],
    ['allowed', { ...DEFAULT_SUBNET_TRUST, simulatedGpus: 'allowed' as const }, true],
  ] as const)('simulated %s', (_name, trust, includeSimulated) => {
    const base = fundedJob({ subnetId: 'live' });
    const plan = termsPlan({ ...base, terms: { ...base.terms, trust } });
    const [a] = plan.allocations;
    expect(a!.query.includeSimulated).toBe(includeSimulated);
    expect(a!.gang.trust).toEqual({
      simulatedGpus: trust.simulatedGpus,
      verifiedGpus: 'required',
      setBy: "subnet 'live'",
    });
  });

  it('snapshot GPUs carry simulated, verification and note; providers their reliability (0.8 unscored)', () => {
    const real = { ...candidate(P, 1), simulated: false };
    const input = snapshotInput([real, candidate(edgeId('S'), 1)], [], new Map(), 'job-1', undefined, {
      measurements: {
        ...NO_MEASUREMENTS,
        verification: new Map([
          [P, row({ [real.gpus[0]!.uuid]: 'unverified' }, { cause: 'challenge-failed', challengeId: 'c-1' })],
        ]),
        reliability: new Map([[P, { providerId: P, score: 0.4, atMs: 0 }]]),
      },
      atMs: 0,
    });
    const [p, s] = input.providers;
    expect(p!.hosts[0]!.gpus[0]).toMatchObject({
      simulated: false,
      verification: 'unverified',
      verificationNote: 'challenge c-1 failed',
    });
    expect(p!.policy.reliability).toBe(0.4);
    expect(s!.hosts[0]!.gpus[0]).toMatchObject({ simulated: true, verification: null });
    expect(s!.policy.reliability).toBe(0.8);
  });
});
