import {
  type BenchmarkFailed,
  type BenchmarkProfile,
  type BenchmarkReason,
  type BenchmarkRequested,
  type Decider,
  type DomainEvent,
  DomainError,
  type GpuBenchmarked,
  type PayloadOf,
  type ProviderClaimMismatched,
  type ProviderClaimVerified,
  type ProviderReliabilityChanged,
} from '@gpunet/contracts';
import { REFERENCE_TABLE_VERSION } from '@gpunet/edge-bench';
import {
  type ChallengeConclusion,
  decideCommitment,
  decideExpiry,
  decideIssue,
  decideOpening,
  decideRegistration,
  evolveGpuChallenge,
  type GpuChallengeCommand,
  type GpuChallengeEvent,
  type GpuChallengeState,
  initialGpuChallengeState,
} from './gpu-challenge';
import { afterFailure, afterMismatch, afterVerified, RELIABILITY } from './reliability';
import { type Claim, verifyClaim } from './verification';

/*
 * One provider's benchmarking, as a decider: requests go out one at a time, a report is accepted
 * only for the request it answers (unsolicited or late reports are not evidence), and every profile
 * is checked against the provider's claim. Time comes in with the commands.
 */

export type ProviderBenchmarkEvent =
  | DomainEvent<'benchmark.requested', PayloadOf<typeof BenchmarkRequested>>
  | DomainEvent<'benchmark.failed', PayloadOf<typeof BenchmarkFailed>>
  | DomainEvent<'gpu.benchmarked', PayloadOf<typeof GpuBenchmarked>>
  | DomainEvent<'provider.claim.verified', PayloadOf<typeof ProviderClaimVerified>>
  | DomainEvent<'provider.claim.mismatched', PayloadOf<typeof ProviderClaimMismatched>>
  | DomainEvent<'provider.reliability-changed', PayloadOf<typeof ProviderReliabilityChanged>>
  | GpuChallengeEvent;

interface Base {
  readonly providerId: string;
  readonly requestId: string;
  /** ISO time of the decision. */
  readonly at: string;
}

export type ProviderBenchmarkCommand =
  | (Base & {
      readonly type: 'RequestBenchmark';
      readonly reason: BenchmarkReason;
      readonly deadline: string;
    })
  | (Base & {
      readonly type: 'RecordReport';
      readonly outcome: 'completed' | 'failed';
      readonly profile: BenchmarkProfile | null;
      readonly error: string | null;
      /** The provider's claim as discovery last reported it. */
      readonly claim: Claim;
    })
  | (Base & { readonly type: 'RecordDecline'; readonly detail: string })
  | (Base & { readonly type: 'ExpireRequest' })
  | GpuChallengeCommand;

export interface ProviderBenchmarkState {
  readonly pending: {
    readonly requestId: string;
    readonly reason: BenchmarkReason;
    readonly deadline: string;
  } | null;
  readonly reliability: number;
  readonly mismatches: number;
  readonly verifiedRuns: number;
  readonly failedRuns: number;
  readonly lastVerifiedAt: string | null;
  readonly lastMismatchAt: string | null;
  readonly lastProfile: {
    readonly profileId: string;
    readonly measuredAt: string;
    readonly expiresAt: string;
  } | null;
  /** Its GPUs' verification and the challenge out. */
  readonly challenges: GpuChallengeState;
}

export const initialProviderBenchmarkState: ProviderBenchmarkState = {
  pending: null,
  reliability: RELIABILITY.INITIAL,
  mismatches: 0,
  verifiedRuns: 0,
  failedRuns: 0,
  lastVerifiedAt: null,
  lastMismatchAt: null,
  lastProfile: null,
  challenges: initialGpuChallengeState,
};

export class InvalidBenchmarkCommandError extends DomainError {
  override readonly name = 'InvalidBenchmarkCommandError';
  constructor(message: string) {
    super('INVALID_BENCHMARK_COMMAND', message);
  }
}

const reliabilityChanged = (
  providerId: string,
  previous: number,
  score: number,
  cause: PayloadOf<typeof ProviderReliabilityChanged>['cause'],
  at: string,
): ProviderBenchmarkEvent[] =>
  score === previous
    ? []
    : [{ type: 'provider.reliability-changed', data: { providerId, score, previous, cause, at } }];

/** A concluded challenge's events and what it does to the score: a pass like a verified run, a failure like a mismatch. */
const withReliability = (
  command: GpuChallengeCommand,
  state: ProviderBenchmarkState,
  conclusion: ChallengeConclusion | null,
): ProviderBenchmarkEvent[] => {
  if (conclusion === null) return [];
  const { events, weight } = conclusion;
  if (weight === 'excused' || events[0]?.type !== 'provider.challenged') return events;
  return [
    ...events,
    ...(weight === 'passed'
      ? reliabilityChanged(
          command.providerId,
          state.reliability,
          afterVerified(state.reliability),
          'challenge-passed',
          command.at,
        )
      : reliabilityChanged(
          command.providerId,
          state.reliability,
          afterMismatch(state.reliability),
          'challenge-failed',
          command.at,
        )),
  ];
};

const decideChallenge = (
  command: GpuChallengeCommand,
  state: ProviderBenchmarkState,
): ProviderBenchmarkEvent[] => {
  const s = state.challenges;
  switch (command.type) {
    case 'RegisterGpus':
      return decideRegistration(command, s);
    case 'IssueChallenge':
      if (command.challenge.expiresAt <= command.at)
        throw new InvalidBenchmarkCommandError('a challenge must expire after it is issued');
      return decideIssue(command, s);
    case 'RecordCommitment':
      return withReliability(command, state, decideCommitment(command, s));
    case 'RecordOpening':
      return withReliability(command, state, decideOpening(command, s));
    case 'ExpireChallenge':
      return withReliability(command, state, decideExpiry(command, s));
    default: {
      const unknown: never = command;
      throw new InvalidBenchmarkCommandError(`unknown command ${JSON.stringify(unknown)}`);
    }
  }
};

const CHALLENGE_COMMANDS: ReadonlySet<string> = new Set<GpuChallengeCommand['type']>([
  'RegisterGpus',
  'IssueChallenge',
  'RecordCommitment',
  'RecordOpening',
  'ExpireChallenge',
]);
const isChallengeCommand = (c: ProviderBenchmarkCommand): c is GpuChallengeCommand =>
  CHALLENGE_COMMANDS.has(c.type);

const decide = (
  command: ProviderBenchmarkCommand,
  state: ProviderBenchmarkState,
): ProviderBenchmarkEvent[] => {
  if (isChallengeCommand(command)) return decideChallenge(command, state);
  const { providerId, requestId, at } = command;
  switch (command.type) {
    case 'RequestBenchmark':
      if (state.pending !== null) return [];
      if (command.deadline <= at)
        throw new InvalidBenchmarkCommandError('the deadline must lie after the request');
      return [
        {
          type: 'benchmark.requested',
          data: { providerId, requestId, reason: command.reason, at, deadline: command.deadline },
        },
      ];
    case 'RecordDecline':
      if (state.pending?.requestId !== requestId) return [];
      return [
        {
          type: 'benchmark.failed',
          data: { providerId, requestId, cause: 'declined', detail: command.detail, at },
        },
      ];
    case 'ExpireRequest':
      if (state.pending?.requestId !== requestId || at < state.pending.deadline) return [];
      return [
        {
          type: 'benchmark.failed',
          data: {
            providerId,
            requestId,
            cause: 'timed-out',
            detail: `no report by ${state.pending.deadline}`,
            at,
          },
        },
        ...reliabilityChanged(
          providerId,
          state.reliability,
          afterFailure(state.reliability),
          'benchmark-failed',
          at,
        ),
      ];
    case 'RecordReport': {
      if (state.pending?.requestId !== requestId) return [];
      if (command.outcome === 'failed' || command.profile === null)
        return [
          {
            type: 'benchmark.failed',
            data: {
              providerId,
              requestId,
              cause: 'failed',
              detail: (command.error ?? 'no profile').slice(0, 2048),
              at,
            },
          },
          ...reliabilityChanged(
            providerId,
            state.reliability,
            afterFailure(state.reliability),
            'benchmark-failed',
            at,
          ),
        ];
      const profile = command.profile;
      const benchmarked: ProviderBenchmarkEvent = {
        type: 'gpu.benchmarked',
        data: {
          providerId,
          requestId,
          reason: state.pending.reason,
          simulated: command.claim.simulated,
          profile,
          at,
        },
      };
      const { passed, failed } = verifyClaim(command.claim, profile);
      if (failed.length === 0) {
        return [
          benchmarked,
          {
            type: 'provider.claim.verified',
            data: { providerId, profileId: profile.profileId, checks: [...passed].slice(0, 1024), at },
          },
          ...reliabilityChanged(
            providerId,
            state.reliability,
            afterVerified(state.reliability),
            'claim-verified',
            at,
          ),
        ];
      }
      const after = afterMismatch(state.reliability);
      return [
        benchmarked,
        {
          type: 'provider.claim.mismatched',
          data: {
            providerId,
            profileId: profile.profileId,
            evidence: {
              failed: [...failed].slice(0, 1024),
              passed: [...passed].slice(0, 1024),
              profileKind: profile.kind,
              measuredAt: profile.measuredAt,
              referenceTable: REFERENCE_TABLE_VERSION,
            },
            reliabilityBefore: state.reliability,
            reliabilityAfter: after,
            at,
          },
        },
        ...reliabilityChanged(providerId, state.reliability, after, 'claim-mismatched', at),
      ];
    }
    default: {
      const unknown: never = command;
      throw new InvalidBenchmarkCommandError(`unknown command ${JSON.stringify(unknown)}`);
    }
  }
};

const evolve = (state: ProviderBenchmarkState, event: ProviderBenchmarkEvent): ProviderBenchmarkState => {
  switch (event.type) {
    case 'benchmark.requested':
      return {
        ...state,
        pending: {
          requestId: event.data.requestId,
          reason: event.data.reason,
          deadline: event.data.deadline,
        },
      };
    case 'benchmark.failed':
      return {
        ...state,
        pending: null,
        failedRuns: event.data.cause === 'declined' ? state.failedRuns : state.failedRuns + 1,
      };
    case 'gpu.benchmarked':
      return {
        ...state,
        pending: null,
        lastProfile: {
          profileId: event.data.profile.profileId,
          measuredAt: event.data.profile.measuredAt,
          expiresAt: event.data.profile.expiresAt,
        },
      };
    case 'provider.claim.verified':
      return { ...state, verifiedRuns: state.verifiedRuns + 1, lastVerifiedAt: event.data.at };
    case 'provider.claim.mismatched':
      return { ...state, mismatches: state.mismatches + 1, lastMismatchAt: event.data.at };
    case 'provider.reliability-changed':
      return { ...state, reliability: event.data.score };
    case 'challenge.issued':
    case 'challenge.committed':
    case 'provider.challenged':
    case 'gpu.verification-changed':
      return { ...state, challenges: evolveGpuChallenge(state.challenges, event) };
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
};

export const providerBenchmarkDecider: Decider<
  ProviderBenchmarkCommand,
  ProviderBenchmarkEvent,
  ProviderBenchmarkState
> = { decide, evolve, initialState: initialProviderBenchmarkState };
