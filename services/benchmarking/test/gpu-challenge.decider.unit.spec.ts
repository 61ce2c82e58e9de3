import { foldEvents } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  InvalidBenchmarkCommandError,
  type ProviderBenchmarkEvent,
  providerBenchmarkDecider as decider,
} from '../src/domain/provider-benchmark.decider';
import { PROVIDER } from './fixtures';

const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:00:01.000Z';
const EXPIRES = '2030-01-01T00:00:20.000Z';
const SEED = 'a'.repeat(64);
const ROOT = 'b'.repeat(64);
const GPUS = ['GPU-0', 'GPU-1'];

const registered: ProviderBenchmarkEvent = {
  type: 'gpu.verification-changed',
  data: {
    providerId: PROVIDER,
    gpus: GPUS.map((uuid) => ({ uuid, status: 'pending' as const })),
    cause: 'registered',
    challengeId: null,
    at: T0,
  },
};
const challenge = {
  challengeId: 'c1',
  gpuUuid: 'GPU-1',
  reason: 'registration' as const,
  jobId: null,
  seed: SEED,
  n: 1024,
  dtype: 'fp16' as const,
  claimedTflops: 742.1,
  deadlineMs: 500,
  expiresAt: EXPIRES,
};
const issued: ProviderBenchmarkEvent = {
  type: 'challenge.issued',
  data: { ...challenge, providerId: PROVIDER, sentAt: T0, at: T0 },
};
const committed: ProviderBenchmarkEvent = {
  type: 'challenge.committed',
  data: {
    providerId: PROVIDER,
    challengeId: 'c1',
    root: ROOT,
    elapsedMs: 120,
    bytesSent: 200,
    bytesReceived: 150,
    at: T1,
  },
};
const base = { providerId: PROVIDER, at: T1 } as const;

/** What `command` decides after `history` (for assertions on parts of the events). */
const decided = (
  history: readonly ProviderBenchmarkEvent[],
  command: Parameters<typeof decider.decide>[0],
): readonly ProviderBenchmarkEvent[] => decider.decide(command, foldEvents(decider, history));
const bytes = { bytesSent: 200, bytesReceived: 150 };
const evidence = {
  seed: SEED,
  n: 1024,
  dtype: 'fp16',
  claimedTflops: 742.1,
  deadlineMs: 500,
};

describe('GPU challenges on the provider decider', () => {
  it('puts a registered provider’s GPUs at pending, a simulated one’s at simulated, once', () => {
    given(decider)
      .when({ type: 'RegisterGpus', ...base, at: T0, simulated: false, gpuUuids: GPUS })
      .then([registered]);
    given(decider)
      .when({ type: 'RegisterGpus', ...base, at: T0, simulated: true, gpuUuids: ['SIM-0'] })
      .then([
        {
          type: 'gpu.verification-changed',
          data: {
            providerId: PROVIDER,
            gpus: [{ uuid: 'SIM-0', status: 'simulated' }],
            cause: 'registered',
            challengeId: null,
            at: T0,
          },
        },
      ]);
    given(decider, [registered])
      .when({ type: 'RegisterGpus', ...base, simulated: false, gpuUuids: GPUS })
      .then([]);
  });

  it('sends changed hardware back to pending, verified GPUs included', () => {
    const verified: ProviderBenchmarkEvent = {
      type: 'gpu.verification-changed',
      data: {
        ...registered.data,
        gpus: GPUS.map((uuid) => ({ uuid, status: 'verified' as const })),
        cause: 'challenge-passed',
        challengeId: 'c0',
      } as never,
    };
    given(decider, [registered, verified])
      .when({ type: 'RegisterGpus', ...base, simulated: false, gpuUuids: ['GPU-0', 'GPU-2'] })
      .then([
        {
          type: 'gpu.verification-changed',
          data: {
            providerId: PROVIDER,
            gpus: [
              { uuid: 'GPU-0', status: 'pending' },
              { uuid: 'GPU-2', status: 'pending' },
            ],
            cause: 'inventory-changed',
            challengeId: null,
            at: T1,
          },
        },
      ]);
  });

  it('issues one challenge at a time, only for a known GPU that is not simulated', () => {
    given(decider, [registered])
      .when({ type: 'IssueChallenge', ...base, at: T0, challenge })
      .then([issued]);
    given(decider, [registered, issued])
      .when({ type: 'IssueChallenge', ...base, challenge: { ...challenge, challengeId: 'c2' } })
      .then([]);
    given(decider, [registered])
      .when({ type: 'IssueChallenge', ...base, challenge: { ...challenge, gpuUuid: 'GPU-9' } })
      .then([]);
    given(decider)
      .when({ type: 'IssueChallenge', ...base, challenge })
      .then([]);
    given(decider, [registered])
      .when({ type: 'IssueChallenge', ...base, at: EXPIRES, challenge })
      .thenThrows(InvalidBenchmarkCommandError);
  });

  it('keeps a commitment in time for its opening; a passed opening verifies the GPU and raises the score', () => {
    given(decider, [registered, issued])
      .when({
        type: 'RecordCommitment',
        ...base,
        challengeId: 'c1',
        answer: { kind: 'committed', root: ROOT, elapsedMs: 120 },
        ...bytes,
      })
      .then([committed]);
    const opening = {
      type: 'RecordOpening',
      ...base,
      challengeId: 'c1',
      openedRows: [3, 700],
      verdict: { ok: true },
      bytesSent: 100,
      bytesReceived: 9000,
    } as const;
    given(decider, [registered, issued, committed])
      .when(opening)
      .then([
        {
          type: 'provider.challenged',
          data: {
            providerId: PROVIDER,
            challengeId: 'c1',
            reason: 'registration',
            jobId: null,
            gpuUuid: 'GPU-1',
            outcome: 'passed',
            evidence: {
              ...evidence,
              elapsedMs: 120,
              root: ROOT,
              openedRows: [3, 700],
              failure: null,
              bytesSent: 300,
              bytesReceived: 9150,
            },
            at: T1,
          },
        } as ProviderBenchmarkEvent,
        {
          type: 'gpu.verification-changed',
          data: {
            providerId: PROVIDER,
            gpus: [
              { uuid: 'GPU-0', status: 'pending' },
              { uuid: 'GPU-1', status: 'verified' },
            ],
            cause: 'challenge-passed',
            challengeId: 'c1',
            at: T1,
          },
        },
        {
          type: 'provider.reliability-changed',
          data: { providerId: PROVIDER, score: 0.85, previous: 0.8, cause: 'challenge-passed', at: T1 },
        },
      ]);
    const after = foldEvents(decider, [
      registered,
      issued,
      committed,
      ...decided([registered, issued, committed], opening),
    ]);
    expect(after.challenges).toMatchObject({
      challenge: null,
      gpus: [
        { uuid: 'GPU-0', status: 'pending', since: T0, challengeId: null },
        { uuid: 'GPU-1', status: 'verified', since: T1, challengeId: 'c1' },
      ],
    });
  });

  it('fails a late commitment with its time, marks the GPU unverified and cuts the score like a mismatch', () => {
    const events = decided([registered, issued], {
      type: 'RecordCommitment',
      ...base,
      challengeId: 'c1',
      answer: { kind: 'committed', root: ROOT, elapsedMs: 501 },
      ...bytes,
    });
    expect(events.map((e) => e.type)).toEqual([
      'provider.challenged',
      'gpu.verification-changed',
      'provider.reliability-changed',
    ]);
    expect(events[0]!.data).toMatchObject({
      outcome: 'failed',
      evidence: { elapsedMs: 501, root: ROOT, failure: { kind: 'late' } },
    });
    expect(events[1]!.data).toMatchObject({
      gpus: [
        { uuid: 'GPU-0', status: 'pending' },
        { uuid: 'GPU-1', status: 'unverified' },
      ],
      cause: 'challenge-failed',
    });
    expect(events[2]!.data).toMatchObject({ score: 0.32, previous: 0.8, cause: 'challenge-failed' });
  });

  it.each([
    ['no answer', { kind: 'no-answer', detail: 'nobody answers' }, 'no-answer'],
    ['an answer off contract', { kind: 'malformed', detail: 'bad reply' }, 'malformed'],
    [
      'a refusal while idle, not busy',
      { kind: 'declined', code: 'UNKNOWN_GPU', message: 'no', elapsedMs: 3 },
      'declined',
    ],
  ] as const)('fails a challenge that got %s', (_name, answer, kind) => {
    const events = decided([registered, issued], {
      type: 'RecordCommitment',
      ...base,
      challengeId: 'c1',
      answer,
      ...bytes,
    });
    expect(events.map((e) => e.type)).toEqual([
      'provider.challenged',
      'gpu.verification-changed',
      'provider.reliability-changed',
    ]);
    expect(events[0]!.data).toMatchObject({ outcome: 'failed', evidence: { failure: { kind } } });
  });

  it('excuses a busy refusal of a registration or idle challenge, but not of a spot check of the job', () => {
    const answer = { kind: 'declined', code: 'BUSY', message: 'a job holds it', elapsedMs: 2 } as const;
    const excused = decided([registered, issued], {
      type: 'RecordCommitment',
      ...base,
      challengeId: 'c1',
      answer,
      ...bytes,
    });
    expect(excused.map((e) => e.type)).toEqual(['provider.challenged']);
    const spot: ProviderBenchmarkEvent = {
      type: 'challenge.issued',
      data: { ...issued.data, reason: 'spot-check', jobId: 'job-1' } as never,
    };
    const evidence = decided([registered, spot], {
      type: 'RecordCommitment',
      ...base,
      challengeId: 'c1',
      answer,
      ...bytes,
    });
    expect(evidence.map((e) => e.type)).toEqual([
      'provider.challenged',
      'gpu.verification-changed',
      'provider.reliability-changed',
    ]);
    expect(evidence[0]!.data).toMatchObject({ jobId: 'job-1', reason: 'spot-check' });
  });

  it('fails a wrong opening with the rows opened', () => {
    const events = decided([registered, issued, committed], {
      type: 'RecordOpening',
      ...base,
      challengeId: 'c1',
      openedRows: [1],
      verdict: { ok: false, kind: 'wrong-product', detail: "Freivalds' check failed" },
      bytesSent: 1,
      bytesReceived: 1,
    });
    expect(events[0]!.data).toMatchObject({
      outcome: 'failed',
      evidence: { openedRows: [1], failure: { kind: 'wrong-product' }, elapsedMs: 120 },
    });
    expect(events[2]!.data).toMatchObject({ score: 0.32 });
  });

  it('decides a challenge out past its time no-answer, and nothing before', () => {
    given(decider, [registered, issued])
      .when({ type: 'ExpireChallenge', ...base, challengeId: 'c1' })
      .then([]);
    const events = decided([registered, issued, committed], {
      type: 'ExpireChallenge',
      ...base,
      at: EXPIRES,
      challengeId: 'c1',
    });
    expect(events[0]!.data).toMatchObject({
      outcome: 'failed',
      evidence: { failure: { kind: 'no-answer', detail: `no opening by ${EXPIRES}` } },
    });
  });

  it('ignores answers to a challenge not out', () => {
    given(decider, [registered, issued])
      .when({
        type: 'RecordCommitment',
        ...base,
        challengeId: 'other',
        answer: { kind: 'committed', root: ROOT, elapsedMs: 1 },
        ...bytes,
      })
      .then([]);
    given(decider, [registered, issued])
      .when({
        type: 'RecordOpening',
        ...base,
        challengeId: 'c1',
        openedRows: [],
        verdict: { ok: true },
        ...bytes,
      })
      .then([]);
  });
});
