import type { CandidateProvider } from '@gpunet/contracts';
import { createSnapshot, gangRequest, schedule } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import { isolationView, snapshotInput } from '../src/domain/placement-input';
import { edgeSubnetOf, termsPlan } from '../src/domain/placement-plan';
import { placementRegistry } from '../src/domain/placement-registry';
import { candidatePrices } from '../src/domain/subnet-pricing';
import {
  inGoodStanding,
  jailEndsAfter,
  type StandingRow,
  standingInWords,
  standsBetter,
} from '../src/domain/subnet-standing';
import { SUBNET_STANDING, SubnetStandingReason } from '../src/domain/subnet-standing.filter';
import { candidate, edgeId, fundedJob } from './support/fixtures';
import { standingRow } from './support/standing';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const P = edgeId('P');
const row = (standing: StandingRow['standing'], over: Partial<StandingRow> = {}) =>
  standingRow('public', P, standing, over);

describe('good standing, on the scheduler’s clock', () => {
  it.each([
    ['no row: not a member', undefined, false],
    ['good', row('good'), true],
    ['below the minimum stake', row('below-minimum-stake'), false],
    ['jailed, the jail not over', row('jailed', { jailedUntilMs: NOW + 1 }), false],
    ['jailed, the jail over at this very instant', row('jailed', { jailedUntilMs: NOW }), true],
    ['jailed with no end', row('jailed'), false],
    ['unbonding', row('unbonding'), false],
    ['released', row('released'), false],
  ] as const)('%s → %s', (_name, r, good) => {
    expect(inGoodStanding(r, NOW)).toBe(good);
  });

  it.each([
    ['first report good', null, row('good'), true],
    ['first report below the minimum', null, row('below-minimum-stake'), false],
    ['below the minimum → good', row('below-minimum-stake'), row('good'), true],
    ['good → jailed', row('good'), row('jailed', { jailedUntilMs: NOW + 1 }), false],
    ['good → good (nothing new)', row('good'), row('good', { seq: 2 }), false],
    ['an expired jail reported: good already', null, row('jailed', { jailedUntilMs: NOW - 1 }), true],
  ] as const)('wakes parked jobs: %s → %s', (_name, before, after, wakes) => {
    expect(standsBetter(before, after, NOW)).toBe(wakes);
  });

  it('a jail not over yet says when it ends; anything else, nothing', () => {
    expect(jailEndsAfter(row('jailed', { jailedUntilMs: NOW + 5 }), NOW)).toBe(NOW + 5);
    expect(jailEndsAfter(row('jailed', { jailedUntilMs: NOW }), NOW)).toBeNull();
    expect(jailEndsAfter(row('good'), NOW)).toBeNull();
    expect(jailEndsAfter(undefined, NOW)).toBeNull();
  });

  it.each([
    [undefined, 'no standing reported'],
    [
      row('below-minimum-stake', { stake: '5', minStake: '10' }),
      'below-minimum-stake: stake 5 of minimum 10',
    ],
    [row('jailed', { jailedUntilMs: NOW }), 'jailed until 2030-01-01T12:00:00.000Z'],
    [row('unbonding'), 'unbonding'],
  ] as const)('in words: %o → %s', (r, words) => {
    expect(standingInWords(r)).toBe(words);
  });
});

describe('subnet-standing filter: a job is offered only members in good standing of its subnet', () => {
  const [A, B, C, D, E] = ['A', 'B', 'C', 'D', 'E'].map(edgeId) as [string, string, string, string, string];
  const candidates: CandidateProvider[] = [A, B, C, D, E].map((id) => candidate(id, 2));
  const standings = new Map<string, StandingRow>([
    [A, standingRow('public', A, 'good')],
    [B, standingRow('public', B, 'below-minimum-stake', { stake: '5', minStake: '10' })],
    // C: no row in the job's subnet
    [D, standingRow('public', D, 'jailed', { jailedUntilMs: NOW - 1 })],
    [E, standingRow('public', E, 'jailed', { jailedUntilMs: NOW + 60_000 })],
  ]);
  const place = (gpus: number) => {
    const job = fundedJob({ gpus });
    const offered = new Map([['main', new Set(candidates.flatMap((c) => c.gpus.map((g) => g.uuid)))]]);
    return schedule(
      createSnapshot(snapshotInput(candidates, job.gpuClasses)),
      {
        id: job.jobId,
        allocations: [gangRequest({ gpuCount: gpus, maxNodes: gpus, models: ['H100 80GB'] })],
        edgeConstraints: [],
      },
      {
        seed: 1,
        registry: placementRegistry(offered, {
          standing: { subnetId: 'public', standings, atMs: NOW },
          isolation: isolationView(job, candidates),
          prices: candidatePrices(job, candidates),
          pricing: 'fixed',
        }),
        explain: true,
      },
    );
  };

  it('places on the good member and the one whose jail is over', () => {
    const r = place(4);
    if (r.code !== 'Success') throw new Error(r.message);
    expect(r.placement.allocations[0]!.nodes.map((n) => n.providerId).sort()).toEqual([A, D].sort());
  });

  it('a job that needs the others is not placed: the standing filter counts their GPUs and names each reason', () => {
    const r = place(6);
    // The core judges the cluster as it stands (the engine parks the job: standing can change).
    if (r.code === 'Success') throw new Error('placed on providers not in good standing');
    expect(r.reasons.filter((x) => x.plugin === SUBNET_STANDING)).toEqual([
      {
        plugin: SUBNET_STANDING,
        reason: SubnetStandingReason.BelowMinimumStake,
        message:
          "not a member of subnet 'public' in good standing (below-minimum-stake: stake 5 of minimum 10)",
        gpus: 6,
      },
    ]);
    expect(r.message).toContain("only 4 match model H100 80GB, in good standing in subnet 'public'");
    // Each distinct standing is quoted with its own count.
    for (const words of [
      'below-minimum-stake: stake 5 of minimum 10',
      'no standing reported',
      'jailed until 2030-01-01T12:01:00.000Z',
    ])
      expect(r.message).toContain(
        `2 by subnet-standing (not a member of subnet 'public' in good standing (${words}))`,
      );
  });

  it.each([
    ['no row', C, SubnetStandingReason.NotAMember, 'no standing reported'],
    ['a jail not over', E, SubnetStandingReason.Jailed, 'jailed until 2030-01-01T12:01:00.000Z'],
  ] as const)('%s: its own reason', (_name, id, reason, words) => {
    const only = [candidate(id, 2)];
    const job = fundedJob({ gpus: 2 });
    const r = schedule(
      createSnapshot(snapshotInput(only, job.gpuClasses)),
      { id: job.jobId, allocations: [gangRequest({ gpuCount: 2, maxNodes: 2 })], edgeConstraints: [] },
      {
        seed: 1,
        registry: placementRegistry(new Map(), {
          standing: { subnetId: 'public', standings, atMs: NOW },
          isolation: isolationView(job, only),
          prices: candidatePrices(job, only),
          pricing: 'fixed',
        }),
        explain: true,
      },
    );
    if (r.code === 'Success') throw new Error('placed');
    expect(r.reasons.find((x) => x.plugin === SUBNET_STANDING)).toMatchObject({
      reason,
      message: `not a member of subnet 'public' in good standing (${words})`,
      gpus: 2,
    });
  });
});

describe('discovery is asked for the job’s subnet as an edge policy names it', () => {
  it.each([
    ['a policy-shaped id', 'gov', 'gov'],
    ['upper case: no policy can name it', 'Gov', null],
    ['longer than a policy name', 'g'.repeat(64), null],
  ] as const)('%s', (_name, subnetId, asked) => {
    expect(edgeSubnetOf({ subnetId })).toBe(asked);
    expect(termsPlan(fundedJob({ subnetId })).allocations[0]!.query.subnet).toBe(asked);
  });
});
