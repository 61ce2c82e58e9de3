import {
  type ChallengeDtype,
  type ChallengeEvidence,
  type ChallengeFailureKind,
  type ChallengeReason,
  type DomainEvent,
  type GpuVerificationChanged,
  type GpuVerificationStatus,
  type PayloadOf,
  type ProviderChallenged,
} from '@gpunet/contracts';

/*
 * GPU challenges, the part of a provider's benchmarking decider that proves its GPUs (ADR 0070).
 * One challenge per provider at a time: issued (a private event with the seed, the size, the claimed
 * figure and the deadline, sent on the service clock), committed in time (private: the root and the
 * elapsed time on the verifier's own monotonic clock), then concluded by `provider.challenged` with
 * the evidence, the GPUs' statuses and the reliability change. Time comes in with the commands.
 */

/** A challenge as the provider's stream records it while it is out. */
export interface PendingChallenge {
  readonly challengeId: string;
  readonly gpuUuid: string;
  readonly reason: ChallengeReason;
  readonly jobId: string | null;
  readonly seed: string;
  readonly n: number;
  readonly dtype: ChallengeDtype;
  readonly claimedTflops: number;
  readonly deadlineMs: number;
  /** Service-clock time it was issued at (its command goes out right after). */
  readonly sentAt: string;
  /** Service-clock time by which it must be decided; past it, the next tick decides it `no-answer`. */
  readonly expiresAt: string;
  /** Set once the commitment came in time. */
  readonly root: string | null;
  readonly elapsedMs: number | null;
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

export interface GpuVerification {
  readonly uuid: string;
  readonly status: GpuVerificationStatus;
  /** When the status last changed. */
  readonly since: string;
  /** The challenge behind the status; null while pending or simulated. */
  readonly challengeId: string | null;
}

export type ChallengeIssuedData = Omit<
  PendingChallenge,
  'root' | 'elapsedMs' | 'bytesSent' | 'bytesReceived'
> & {
  readonly providerId: string;
  readonly at: string;
};

export interface ChallengeCommittedData {
  readonly providerId: string;
  readonly challengeId: string;
  readonly root: string;
  readonly elapsedMs: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
  readonly at: string;
}

/** Events only the provider's stream keeps (never published). */
export const PRIVATE_CHALLENGE_EVENTS: ReadonlySet<string> = new Set([
  'challenge.issued',
  'challenge.committed',
]);

export type GpuChallengeEvent =
  | DomainEvent<'challenge.issued', ChallengeIssuedData>
  | DomainEvent<'challenge.committed', ChallengeCommittedData>
  | DomainEvent<'provider.challenged', PayloadOf<typeof ProviderChallenged>>
  | DomainEvent<'gpu.verification-changed', PayloadOf<typeof GpuVerificationChanged>>;

interface Base {
  readonly providerId: string;
  /** ISO time of the decision (the service clock). */
  readonly at: string;
}

/** What the edge answered to the challenge: its commitment (timed by the verifier), a refusal, or nothing. */
export type CommitmentAnswer =
  | { readonly kind: 'committed'; readonly root: string; readonly elapsedMs: number }
  | { readonly kind: 'declined'; readonly code: string; readonly message: string; readonly elapsedMs: number }
  | { readonly kind: 'no-answer'; readonly detail: string }
  | { readonly kind: 'malformed'; readonly detail: string };

/** The check of the opening: passed, or how it failed. */
export type OpeningVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly kind: ChallengeFailureKind; readonly detail: string };

export type GpuChallengeCommand =
  | (Base & {
      readonly type: 'RegisterGpus';
      readonly simulated: boolean;
      /** Every GPU of the provider's claim, in the claim's order. */
      readonly gpuUuids: readonly string[];
    })
  | (Base & {
      readonly type: 'IssueChallenge';
      readonly challenge: Omit<ChallengeIssuedData, 'providerId' | 'at' | 'sentAt'>;
    })
  | (Base & {
      readonly type: 'RecordCommitment';
      readonly challengeId: string;
      readonly answer: CommitmentAnswer;
      readonly bytesSent: number;
      readonly bytesReceived: number;
    })
  | (Base & {
      readonly type: 'RecordOpening';
      readonly challengeId: string;
      readonly openedRows: readonly number[];
      readonly verdict: OpeningVerdict;
      readonly bytesSent: number;
      readonly bytesReceived: number;
    })
  | (Base & { readonly type: 'ExpireChallenge'; readonly challengeId: string });

export interface GpuChallengeState {
  /** Discovery's registration reached the stream (the GPUs below are its claim's). */
  readonly registered: boolean;
  readonly gpus: readonly GpuVerification[];
  readonly challenge: PendingChallenge | null;
  readonly lastChallengeAt: string | null;
  /** The challenge concluded last and its GPU. */
  readonly concluded: { readonly challengeId: string; readonly gpuUuid: string } | null;
}

export const initialGpuChallengeState: GpuChallengeState = {
  registered: false,
  gpus: [],
  challenge: null,
  lastChallengeAt: null,
  concluded: null,
};

/** How a concluded challenge weighs on the provider's reliability. */
export type ChallengeWeight = 'passed' | 'failed' | 'excused';

export interface ChallengeConclusion {
  readonly events: GpuChallengeEvent[];
  readonly weight: ChallengeWeight;
}

const sameGpus = (state: GpuChallengeState, simulated: boolean, uuids: readonly string[]): boolean =>
  state.registered &&
  state.gpus.length === uuids.length &&
  state.gpus.every((g, i) => g.uuid === uuids[i] && (g.status === 'simulated') === simulated);

/** Registration or a changed claim: every GPU back to pending (or simulated, never challenged). */
export const decideRegistration = (
  command: Extract<GpuChallengeCommand, { type: 'RegisterGpus' }>,
  state: GpuChallengeState,
): GpuChallengeEvent[] => {
  const uuids = [...new Set(command.gpuUuids)];
  if (sameGpus(state, command.simulated, uuids)) return [];
  const status: GpuVerificationStatus = command.simulated ? 'simulated' : 'pending';
  return [
    {
      type: 'gpu.verification-changed',
      data: {
        providerId: command.providerId,
        gpus: uuids.slice(0, 64).map((uuid) => ({ uuid, status })),
        cause: state.registered ? 'inventory-changed' : 'registered',
        challengeId: null,
        at: command.at,
      },
    },
  ];
};

/** A challenge may go out: none is out, and the GPU is one of the provider's, not simulated. */
export const decideIssue = (
  command: Extract<GpuChallengeCommand, { type: 'IssueChallenge' }>,
  state: GpuChallengeState,
): GpuChallengeEvent[] => {
  const c = command.challenge;
  if (state.challenge !== null) return [];
  const gpu = state.gpus.find((g) => g.uuid === c.gpuUuid);
  if (gpu === undefined || gpu.status === 'simulated') return [];
  return [
    {
      type: 'challenge.issued',
      data: { ...c, providerId: command.providerId, sentAt: command.at, at: command.at },
    },
  ];
};

/** The edge's answer to the challenge: a commitment in time waits for its opening; anything else ends it. */
export const decideCommitment = (
  command: Extract<GpuChallengeCommand, { type: 'RecordCommitment' }>,
  state: GpuChallengeState,
): ChallengeConclusion | null => {
  const c = state.challenge;
  if (c?.challengeId !== command.challengeId || c.root !== null) return null;
  const bytes = {
    bytesSent: c.bytesSent + command.bytesSent,
    bytesReceived: c.bytesReceived + command.bytesReceived,
  };
  const a = command.answer;
  switch (a.kind) {
    case 'committed':
      if (a.elapsedMs <= c.deadlineMs)
        return {
          weight: 'passed',
          events: [
            {
              type: 'challenge.committed',
              data: {
                providerId: command.providerId,
                challengeId: c.challengeId,
                root: a.root,
                elapsedMs: a.elapsedMs,
                ...bytes,
                at: command.at,
              },
            },
          ],
        };
      return conclude(command, state, c, {
        ...bytes,
        root: a.root,
        elapsedMs: a.elapsedMs,
        openedRows: [],
        failure: {
          kind: 'late',
          detail: `committed after ${Math.round(a.elapsedMs)} ms on the verifier's clock; the deadline was ${c.deadlineMs} ms`,
        },
      });
    case 'declined':
      return conclude(command, state, c, {
        ...bytes,
        root: null,
        elapsedMs: a.elapsedMs,
        openedRows: [],
        failure: { kind: 'declined', detail: `${a.code}: ${a.message}` },
        excused: a.code === 'BUSY' && c.reason !== 'spot-check',
      });
    case 'no-answer':
    case 'malformed':
      return conclude(command, state, c, {
        ...bytes,
        root: null,
        elapsedMs: null,
        openedRows: [],
        failure: { kind: a.kind, detail: a.detail },
      });
    default: {
      const unknown: never = a;
      throw new Error(`unknown commitment answer ${JSON.stringify(unknown)}`);
    }
  }
};

/** The opening's check ends a committed challenge. */
export const decideOpening = (
  command: Extract<GpuChallengeCommand, { type: 'RecordOpening' }>,
  state: GpuChallengeState,
): ChallengeConclusion | null => {
  const c = state.challenge;
  if (c?.challengeId !== command.challengeId || c.root === null) return null;
  const v = command.verdict;
  return conclude(command, state, c, {
    bytesSent: c.bytesSent + command.bytesSent,
    bytesReceived: c.bytesReceived + command.bytesReceived,
    root: c.root,
    elapsedMs: c.elapsedMs,
    openedRows: command.openedRows.slice(0, 64),
    failure: v.ok ? null : { kind: v.kind, detail: v.detail },
  });
};

/** A challenge still out past its `expiresAt` (a restart lost its reply, or nothing came) got no answer. */
export const decideExpiry = (
  command: Extract<GpuChallengeCommand, { type: 'ExpireChallenge' }>,
  state: GpuChallengeState,
): ChallengeConclusion | null => {
  const c = state.challenge;
  if (c?.challengeId !== command.challengeId || command.at < c.expiresAt) return null;
  return conclude(command, state, c, {
    bytesSent: c.bytesSent,
    bytesReceived: c.bytesReceived,
    root: c.root,
    elapsedMs: c.elapsedMs,
    openedRows: [],
    failure: {
      kind: 'no-answer',
      detail: c.root === null ? `no commitment by ${c.expiresAt}` : `no opening by ${c.expiresAt}`,
    },
  });
};

const conclude = (
  command: Base,
  state: GpuChallengeState,
  c: PendingChallenge,
  outcome: Pick<
    ChallengeEvidence,
    'bytesSent' | 'bytesReceived' | 'root' | 'elapsedMs' | 'openedRows' | 'failure'
  > & { readonly excused?: boolean },
): ChallengeConclusion => {
  const { excused = false, failure, ...rest } = outcome;
  const passed = failure === null;
  const evidence: ChallengeEvidence = {
    seed: c.seed,
    n: c.n,
    dtype: c.dtype,
    claimedTflops: c.claimedTflops,
    deadlineMs: c.deadlineMs,
    ...rest,
    elapsedMs: rest.elapsedMs === null ? null : Math.max(0, rest.elapsedMs),
    openedRows: [...rest.openedRows],
    failure: failure === null ? null : { kind: failure.kind, detail: failure.detail.slice(0, 1000) },
  };
  const events: GpuChallengeEvent[] = [
    {
      type: 'provider.challenged',
      data: {
        providerId: command.providerId,
        challengeId: c.challengeId,
        reason: c.reason,
        jobId: c.jobId,
        gpuUuid: c.gpuUuid,
        outcome: passed ? 'passed' : 'failed',
        evidence,
        at: command.at,
      },
    },
  ];
  // A GPU busy with someone else's work may refuse an unannounced check; a refused spot check of
  // the job it runs is evidence.
  if (excused) return { events, weight: 'excused' };
  if (state.gpus.some((g) => g.uuid === c.gpuUuid))
    events.push({
      type: 'gpu.verification-changed',
      data: {
        providerId: command.providerId,
        gpus: state.gpus.map((g) => ({
          uuid: g.uuid,
          status: g.uuid === c.gpuUuid ? (passed ? 'verified' : 'unverified') : g.status,
        })),
        cause: passed ? 'challenge-passed' : 'challenge-failed',
        challengeId: c.challengeId,
        at: command.at,
      },
    });
  return { events, weight: passed ? 'passed' : 'failed' };
};

export const evolveGpuChallenge = (state: GpuChallengeState, event: GpuChallengeEvent): GpuChallengeState => {
  switch (event.type) {
    case 'challenge.issued': {
      const { providerId: _p, at, ...c } = event.data;
      return {
        ...state,
        challenge: { ...c, root: null, elapsedMs: null, bytesSent: 0, bytesReceived: 0 },
        lastChallengeAt: at,
      };
    }
    case 'challenge.committed':
      return state.challenge === null
        ? state
        : {
            ...state,
            challenge: {
              ...state.challenge,
              root: event.data.root,
              elapsedMs: event.data.elapsedMs,
              bytesSent: event.data.bytesSent,
              bytesReceived: event.data.bytesReceived,
            },
          };
    case 'provider.challenged':
      return {
        ...state,
        challenge: null,
        concluded: { challengeId: event.data.challengeId, gpuUuid: event.data.gpuUuid },
      };
    case 'gpu.verification-changed': {
      const before = new Map(state.gpus.map((g) => [g.uuid, g]));
      const { at, challengeId } = event.data;
      // The GPU a challenge concluded on takes the challenge as the reason for its status.
      const challenged =
        challengeId !== null && state.concluded?.challengeId === challengeId ? state.concluded.gpuUuid : null;
      return {
        ...state,
        registered: true,
        gpus: event.data.gpus.map((g) => {
          const old = before.get(g.uuid);
          const kept = challengeId !== null && old !== undefined;
          if (kept && old.status === g.status) return g.uuid === challenged ? { ...old, challengeId } : old;
          return {
            uuid: g.uuid,
            status: g.status,
            since: at,
            challengeId: g.uuid === challenged ? challengeId : kept ? old.challengeId : null,
          };
        }),
      };
    }
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
};
