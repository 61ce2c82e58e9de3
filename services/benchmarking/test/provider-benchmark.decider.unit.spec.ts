import { given } from '@gpunet/testing';
import { REFERENCE_TABLE_VERSION } from '@gpunet/edge-bench';
import { describe, expect, it } from 'vitest';
import {
  InvalidBenchmarkCommandError,
  type ProviderBenchmarkEvent,
  providerBenchmarkDecider as decider,
} from '../src/domain/provider-benchmark.decider';
import { DEADLINE, h100Claim, PROVIDER, simulatedProfileFor, T0, T1 } from './fixtures';

const requested: ProviderBenchmarkEvent = {
  type: 'benchmark.requested',
  data: { providerId: PROVIDER, requestId: 'r1', reason: 'initial', at: T0, deadline: DEADLINE },
};
const base = { providerId: PROVIDER, requestId: 'r1', at: T1 } as const;

describe('provider benchmarking decider', () => {
  it('requests a benchmark when none is out, and only one at a time', () => {
    given(decider)
      .when({ type: 'RequestBenchmark', ...base, at: T0, reason: 'initial', deadline: DEADLINE })
      .then([requested]);
    given(decider, [requested])
      .when({
        type: 'RequestBenchmark',
        ...base,
        requestId: 'r2',
        at: T0,
        reason: 'spot-check',
        deadline: DEADLINE,
      })
      .then([]);
    given(decider)
      .when({ type: 'RequestBenchmark', ...base, reason: 'initial', deadline: T0 })
      .thenThrows(InvalidBenchmarkCommandError);
  });

  it('records a profile that matches the claim: benchmarked, verified, reliability up', () => {
    const claim = h100Claim(1);
    const profile = simulatedProfileFor(claim);
    given(decider, [requested])
      .when({ type: 'RecordReport', ...base, outcome: 'completed', profile, error: null, claim })
      .thenState({
        ...decider.initialState,
        reliability: 0.85,
        verifiedRuns: 1,
        lastVerifiedAt: T1,
        lastProfile: { profileId: 'profile-1', measuredAt: profile.measuredAt, expiresAt: profile.expiresAt },
      });
    given(decider, [requested])
      .when({ type: 'RecordReport', ...base, outcome: 'completed', profile, error: null, claim })
      .then([
        {
          type: 'gpu.benchmarked',
          data: {
            providerId: PROVIDER,
            requestId: 'r1',
            reason: 'initial',
            simulated: true,
            profile,
            at: T1,
          },
        },
        {
          type: 'provider.claim.verified',
          data: expect.objectContaining({ providerId: PROVIDER, profileId: 'profile-1', at: T1 }) as never,
        },
        {
          type: 'provider.reliability-changed',
          data: { providerId: PROVIDER, score: 0.85, previous: 0.8, cause: 'claim-verified', at: T1 },
        },
      ]);
  });

  it('flags a simulated edge that claims an H100 but benchmarks far slower, with the evidence in the event', () => {
    const claim = h100Claim(1);
    const profile = simulatedProfileFor(claim, 'T4');
    given(decider, [requested])
      .when({ type: 'RecordReport', ...base, outcome: 'completed', profile, error: null, claim })
      .then([
        expect.objectContaining({ type: 'gpu.benchmarked' }) as never,
        {
          type: 'provider.claim.mismatched',
          data: {
            providerId: PROVIDER,
            profileId: 'profile-1',
            evidence: {
              failed: [
                expect.objectContaining({
                  metric: 'matmul-fp32-tflops',
                  reference: 'H100 SXM',
                  verdict: 'below-tolerance',
                }),
                expect.objectContaining({
                  metric: 'matmul-fp16-tflops',
                  published: 989.4,
                  verdict: 'below-tolerance',
                }),
                expect.objectContaining({
                  metric: 'memory-bandwidth-gbps',
                  published: 3350,
                  verdict: 'below-tolerance',
                }),
              ] as never,
              passed: expect.arrayContaining([
                expect.objectContaining({ metric: 'memory-bytes', verdict: 'ok' }),
              ]) as never,
              profileKind: 'simulated',
              measuredAt: profile.measuredAt,
              referenceTable: REFERENCE_TABLE_VERSION,
            },
            reliabilityBefore: 0.8,
            reliabilityAfter: 0.32,
            at: T1,
          },
        },
        {
          type: 'provider.reliability-changed',
          data: { providerId: PROVIDER, score: 0.32, previous: 0.8, cause: 'claim-mismatched', at: T1 },
        },
      ]);
  });

  it('ignores reports nobody asked for, duplicates and late ones', () => {
    const claim = h100Claim(1);
    const profile = simulatedProfileFor(claim);
    const report = {
      type: 'RecordReport',
      ...base,
      outcome: 'completed',
      profile,
      error: null,
      claim,
    } as const;
    given(decider).when(report).then([]);
    given(decider, [requested])
      .when({ ...report, requestId: 'other' })
      .then([]);
    given(decider, [
      requested,
      {
        type: 'benchmark.failed',
        data: { providerId: PROVIDER, requestId: 'r1', cause: 'timed-out', detail: '', at: DEADLINE },
      },
    ])
      .when(report)
      .then([]);
  });

  it('counts a failed run and a silent edge against reliability, but not a decline', () => {
    given(decider, [requested])
      .when({
        type: 'RecordReport',
        ...base,
        outcome: 'failed',
        profile: null,
        error: 'CUDA error: out of memory',
        claim: h100Claim(),
      })
      .then([
        {
          type: 'benchmark.failed',
          data: {
            providerId: PROVIDER,
            requestId: 'r1',
            cause: 'failed',
            detail: 'CUDA error: out of memory',
            at: T1,
          },
        },
        {
          type: 'provider.reliability-changed',
          data: { providerId: PROVIDER, score: 0.72, previous: 0.8, cause: 'benchmark-failed', at: T1 },
        },
      ]);
    given(decider, [requested])
      .when({ type: 'ExpireRequest', ...base })
      .then([]);
    given(decider, [requested])
      .when({ type: 'ExpireRequest', ...base, at: DEADLINE })
      .then([
        {
          type: 'benchmark.failed',
          data: {
            providerId: PROVIDER,
            requestId: 'r1',
            cause: 'timed-out',
            detail: `no report by ${DEADLINE}`,
            at: DEADLINE,
          },
        },
        expect.objectContaining({ type: 'provider.reliability-changed' }) as never,
      ]);
    given(decider, [requested])
      .when({ type: 'RecordDecline', ...base, detail: 'BUSY: a job holds this host' })
      .then([
        {
          type: 'benchmark.failed',
          data: {
            providerId: PROVIDER,
            requestId: 'r1',
            cause: 'declined',
            detail: 'BUSY: a job holds this host',
            at: T1,
          },
        },
      ]);
  });

  it('keeps lowering the score of a provider that keeps lying, never below 0', () => {
    const claim = h100Claim(1);
    let state = decider.initialState;
    for (let i = 0; i < 12; i++) {
      const request = decider.decide(
        {
          type: 'RequestBenchmark',
          providerId: PROVIDER,
          requestId: `r${i}`,
          at: T0,
          reason: 'spot-check',
          deadline: DEADLINE,
        },
        state,
      );
      state = request.reduce(decider.evolve, state);
      const events = decider.decide(
        {
          type: 'RecordReport',
          providerId: PROVIDER,
          requestId: `r${i}`,
          at: T1,
          outcome: 'completed',
          profile: simulatedProfileFor(claim, 'T4', `p${i}`),
          error: null,
          claim,
        },
        state,
      );
      state = events.reduce(decider.evolve, state);
    }
    expect(state.mismatches).toBe(12);
    expect(state.reliability).toBeGreaterThanOrEqual(0);
    expect(state.reliability).toBeLessThan(0.001);
  });
});
