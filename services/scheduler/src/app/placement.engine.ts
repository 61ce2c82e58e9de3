import type {
  CandidateProvider,
  Causation,
  Clock,
  PayloadOf,
  PlacedAllocation,
  ReleaseOnEdge,
  ReservationReply,
  ReserveOnEdge,
} from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import { createSnapshot, ENSEMBLE, EnsembleReason, REQUEST_SHAPE, schedule } from '@gpunet/scheduling';
import { emptyQueue, enqueue, type FairQueue, markReady, park, remove, takeNext } from '../domain/fair-queue';
import type { AnnouncedJob } from '../domain/job-placement.announcements';
import { type Measurements, NO_MEASUREMENTS } from '../domain/measurements';
import {
  initialJobPlacementState,
  type JobPlacementCommand,
  type JobPlacementEvent,
  type JobPlacementState,
  type ReservationTarget,
} from '../domain/job-placement.decider';
import {
  type FundedJob,
  isolationView,
  mergeCandidates,
  placedAllocations,
  rankCapacity,
  snapshotInput,
} from '../domain/placement-input';
import { placementOutcome, type PlacementOutcome } from '../domain/placement-explanation';
import { placementRegistry } from '../domain/placement-registry';
import { type CandidateQuery, edgeSubnetOf, planFor, type PlanResult } from '../domain/placement-plan';
import { asBids, candidatePrices, gangPricing } from '../domain/subnet-pricing';
import { jailEndsAfter, type StandingRow } from '../domain/subnet-standing';

/** A clock that can also wake the engine (tests pass `FakeClock`). */
export interface SchedulerClock extends Clock {
  setTimeout(callback: () => void, ms: number): unknown;
}

export type ReserveRequest = PayloadOf<typeof ReserveOnEdge>;

/** A release of one reservation of a job. */
export type ReleaseRequest = PayloadOf<typeof ReleaseOnEdge> & { readonly jobId: string };

/** What the engine needs from the world: discovery and the edges. */
export interface PlacementPorts {
  /** Every page of discovery's answer to one allocation's query. */
  findCandidates(
    query: CandidateQuery,
    excludeProviders: readonly string[],
  ): Promise<readonly CandidateProvider[]>;
  /**
   * Resolves with the edge's answer; rejects when it cannot be reached or does not answer in
   * `timeoutMs`. `cause`: the decision that started the round.
   */
  reserve(
    edgeId: string,
    request: ReserveRequest,
    cause: Causation,
    timeoutMs: number,
  ): Promise<ReservationReply>;
  /** Idempotent on the edge (an unknown reservation counts as released). */
  release(edgeId: string, request: ReleaseRequest, cause: Causation): Promise<void>;
}

/** A placement command, or one built from the job's state as its stream has it (null: none). */
export type PlacementCommandInput =
  JobPlacementCommand | ((state: JobPlacementState) => JobPlacementCommand | null);

/** One committed decision on a job: its events, each with the causation of what it asks for. */
export interface DecidedPlacement {
  readonly events: readonly { readonly event: JobPlacementEvent; readonly cause: Causation }[];
  /** The job's state after the decision (as loaded when nothing was decided). */
  readonly state: JobPlacementState;
}

/**
 * The job placement aggregate's write path: decides `command` on the job's stream and commits the
 * events with their announcements. `cause`: the message that caused it; default the stream's own
 * correlation, caused by the command.
 */
export interface JobPlacements {
  /** `explanation`: why a round's nodes were chosen, kept with the decision that starts it. */
  decide(
    job: AnnouncedJob,
    command: PlacementCommandInput,
    cause?: Causation,
    explanation?: PlacementOutcome,
  ): Promise<DecidedPlacement>;
}

/** The scheduler's projection of benchmarking's measurements for some providers (one read). */
export type MeasurementsOf = (providerIds: readonly string[]) => Promise<Measurements>;

/** The scheduler's projection of settlement's standing of some providers in one subnet, by provider id. */
export type StandingsOf = (
  subnetId: string,
  providerIds: readonly string[],
) => Promise<ReadonlyMap<string, StandingRow>>;

export interface PlacementEngineOptions {
  readonly ports: PlacementPorts;
  /**
   * Read once per attempt for its candidates (the service: its Postgres projection). Default:
   * nothing measured — reference TFLOPS, default links, every provider its own site.
   */
  readonly measurements?: MeasurementsOf;
  /**
   * Read once per attempt for its candidates in the job's subnet (the service: its Postgres
   * projection): only providers in good standing there are offered.
   */
  readonly standings: StandingsOf;
  readonly placements: JobPlacements;
  readonly clock: SchedulerClock;
  readonly newId: () => string;
  /** How long every chosen edge has to accept. Default 5 s. */
  readonly reservationDeadlineMs?: number;
  /** How long an accepted reservation is held for execution to start the job. Default 5 min. */
  readonly holdMs?: number;
  /** A job queued this long without a placement is unschedulable (`Unschedulable`). Default 1 h. */
  readonly maxWaitMs?: number;
  /** Attempts to send one release before giving up (the edge's hold lapses at `holdUntil` anyway). */
  readonly releaseAttempts?: number;
  /**
   * After an attempt that failed with an error (discovery did not answer, a decision did not
   * commit, …), the job tries again this long later, doubling per consecutive error up to a
   * minute. Default 2 s.
   */
  readonly errorRetryMs?: number;
  /**
   * Parked jobs try again at a capacity event and once more this long after it. The event comes
   * from discovery's stream, but candidates from discovery's in-memory index, which a replica
   * refreshes after its commit, independently: an attempt right after the event can still see the
   * GPUs taken. Default 1 s.
   */
  readonly capacitySettleMs?: number;
  readonly onError?: (error: unknown, context: string) => void;
  /**
   * Told every decision once it is committed (queued, parked and why, a round started or aborted,
   * placed, unschedulable, cancelled): the service logs them, so that a job that waits says why.
   */
  readonly onDecision?: (decision: PlacementDecision) => void;
}

/** How a known job enters the engine (`submit`). */
export interface SubmitOptions {
  /** When it first entered a queue: its maximum wait runs from then (a restart keeps it). Default now. */
  readonly queuedSince?: Date;
  /** The message that made it known (its funding, or its spec arriving second). */
  readonly cause?: Causation;
}

/** One decision of the engine about one job, in words and fields for a log line. */
export interface PlacementDecision {
  readonly jobId: string;
  readonly decision: JobPlacementEvent['type'];
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The fields of a decision worth a log line (never a whole placement: GPUs are counted). */
export const decisionFields = (event: JobPlacementEvent): Readonly<Record<string, unknown>> => {
  switch (event.type) {
    case 'Queued':
      return { attempt: event.data.attempt, reason: event.data.reason };
    case 'ParkedForCapacity':
      return { reason: event.data.message };
    case 'RoundStarted':
      return {
        roundId: event.data.roundId,
        attempt: event.data.attempt,
        providers: [...new Set(event.data.allocations.flatMap((a) => a.nodes.map((n) => n.providerId)))],
        gpus: event.data.allocations.reduce(
          (sum, a) => sum + a.nodes.reduce((s, n) => s + n.gpuUuids.length, 0),
          0,
        ),
      };
    case 'ReservationAccepted':
      return { roundId: event.data.roundId, reservationId: event.data.reservationId };
    case 'ReservationDeclined':
      return {
        roundId: event.data.roundId,
        providerId: event.data.providerId,
        reasons: event.data.reasons,
      };
    case 'RoundAborted':
      return {
        roundId: event.data.roundId,
        cause: event.data.cause,
        reason: event.data.reason,
        excluded: event.data.exclude,
      };
    case 'Placed':
      return { roundId: event.data.roundId };
    case 'DeclaredUnschedulable':
      return { code: event.data.code, reason: event.data.message };
    case 'LateReservationReleased':
      return { roundId: event.data.roundId, reservationId: event.data.release.reservationId };
    case 'WaitExpired':
    case 'Cancelled':
      return {};
  }
};

/** The longest wait before a job whose attempts keep failing with errors tries again. */
const MAX_ERROR_RETRY_MS = 60_000;

const NO_DECISION: DecidedPlacement['events'] = [];

/** Whether the job waits for a round (queued, or parked for capacity). */
const awaitsRound = (state: JobPlacementState): boolean =>
  state.status === 'queued' || state.status === 'waiting';

interface JobEntry {
  readonly job: FundedJob;
  readonly announced: AnnouncedJob;
  readonly plan: PlanResult;
  /** The job's state as its last committed decision left it. */
  state: JobPlacementState;
  /** This job's decisions, one after another in the order they were asked for. */
  decisions: Promise<unknown>;
}

/**
 * The scheduler's loop: a fair queue of funded jobs; for the next ready job it asks discovery for
 * candidates (leaving out providers that declined or stayed silent before), runs the placement core,
 * then reserves on every chosen edge concurrently with a deadline. Every decision about a job goes
 * through its stream (`JobPlacements`: the decider's events and their announcements, committed
 * together); what a committed decision asks of the world — reservations, releases, timers, the GPUs
 * held, the queue — this class does (`act`). Jobs the core cannot place now are parked until a
 * capacity event (`capacityChanged`, and once more shortly after it), never polled; a job whose
 * attempt failed with an error tries again after a backoff.
 */
export class PlacementEngine {
  private readonly jobs = new Map<string, JobEntry>();
  private queue: FairQueue = emptyQueue;
  /** Counts capacity events, so that an attempt knows whether one came while it ran. */
  private capacityEpoch = 0;
  private draining = false;
  private active = true;
  /** Closed: decides nothing more (the application is shutting down). */
  private closed = false;
  /** GPUs of rounds in flight and placed jobs discovery may not know of yet: never offered twice. */
  private readonly held = new Map<string, string>();
  /** The provider of every held GPU (GPU uuid → provider id). */
  private readonly heldOn = new Map<string, string>();
  private readonly deadlineMs: number;
  private readonly holdMs: number;
  private readonly maxWaitMs: number;
  private readonly releaseAttempts: number;
  private readonly errorRetryMs: number;
  private readonly capacitySettleMs: number;
  /** A second wake-up after capacity events is armed. */
  private settling = false;
  /** Consecutive attempts of a job that ended in an error (its backoff), until one does not. */
  private readonly failedAttempts = new Map<string, number>();
  /** Instants parked jobs are woken at because a candidate's jail ends then (one timer each). */
  private readonly jailWakes = new Set<number>();
  private readonly onError: (error: unknown, context: string) => void;

  constructor(private readonly options: PlacementEngineOptions) {
    this.deadlineMs = options.reservationDeadlineMs ?? 5_000;
    this.holdMs = options.holdMs ?? 300_000;
    this.maxWaitMs = options.maxWaitMs ?? 3_600_000;
    this.releaseAttempts = options.releaseAttempts ?? 3;
    this.errorRetryMs = options.errorRetryMs ?? 2_000;
    this.capacitySettleMs = options.capacitySettleMs ?? 1_000;
    this.onError = options.onError ?? (() => undefined);
  }

  /**
   * A funded job whose spec is known enters the engine (idempotent per job id). `spec` null: a v1
   * job, placed from its terms. A new job is queued; a job its stream already knows (a restart, a
   * failover) goes on from where its stream left it. Resolves once that is decided.
   */
  submit(job: FundedJob, spec: NormalizedSpec | null = null, options: SubmitOptions = {}): Promise<void> {
    if (this.jobs.has(job.jobId)) return Promise.resolve();
    const entry: JobEntry = {
      job,
      announced: { jobId: job.jobId, tenantId: job.tenantId, asset: job.asset },
      plan: planFor(job, spec),
      state: initialJobPlacementState,
      decisions: Promise.resolve(),
    };
    this.jobs.set(job.jobId, entry);
    const now = this.options.clock.now();
    const since = options.queuedSince ?? now;
    this.options.clock.setTimeout(
      () => this.decideLater(entry, { type: 'ExpireWait', maxWaitMs: this.maxWaitMs, at: this.now() }),
      Math.max(0, since.getTime() + this.maxWaitMs - now.getTime()),
    );
    return this.enter(entry, options.cause);
  }

  /**
   * Capacity appeared somewhere (`provider.online`, reservations released …): parked jobs try again,
   * at once and once more `capacitySettleMs` later (one timer for a burst of events).
   */
  capacityChanged(): void {
    this.wakeParked();
    if (this.settling) return;
    this.settling = true;
    this.options.clock.setTimeout(() => {
      this.settling = false;
      this.wakeParked();
    }, this.capacitySettleMs);
  }

  /**
   * A provider's edge reported the GPUs it holds (`provider.reservations-changed`): discovery knows
   * them from now on, so placed jobs' GPUs on it that the edge no longer holds (the job ended, the
   * hold lapsed) are offered again. A stale report can free a GPU too early; the edge then declines
   * the reservation and the job is retried elsewhere, so the edge stays the one source of truth.
   */
  reservationsChanged(providerId: string, reservedGpuUuids: readonly string[]): void {
    const reserved = new Set(reservedGpuUuids);
    for (const [gpu, jobId] of this.held) {
      if (this.heldOn.get(gpu) !== providerId || reserved.has(gpu)) continue;
      if (this.jobs.get(jobId)?.state.status !== 'placed') continue; // a round in flight keeps its GPUs
      this.held.delete(gpu);
      this.heldOn.delete(gpu);
    }
  }

  /** The job was cancelled (`cause`: the cancellation): what it holds is released. */
  cancel(jobId: string, cause?: Causation): Promise<void> {
    const entry = this.jobs.get(jobId);
    if (!entry) return Promise.resolve();
    const at = this.now();
    return this.decide(
      entry,
      (state) => (state.status === 'new' ? null : { type: 'Cancel', at }),
      cause,
    ).then(
      () => undefined,
      (error: unknown) => this.onError(error, `cancel ${jobId}`),
    );
  }

  /** Only an active engine starts rounds (the replica holding the placer lease). */
  setActive(active: boolean): void {
    this.active = active;
    if (active) this.wake();
  }

  status(jobId: string): JobPlacementState | undefined {
    return this.jobs.get(jobId)?.state;
  }

  /** Resolves when every decision asked for so far has been committed (or has failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((e) => e.decisions));
  }

  /** Starts no round and decides nothing more; resolves once the decisions in flight have settled. */
  async close(): Promise<void> {
    this.active = false;
    this.closed = true;
    await this.settled();
  }

  private now(): string {
    return this.options.clock.now().toISOString();
  }

  /** Queues a new job, or goes on with one its stream knows; a decision that fails is tried again. */
  private enter(entry: JobEntry, cause: Causation | undefined, failures = 0): Promise<void> {
    const { job } = entry;
    const at = this.now();
    return this.decide(
      entry,
      (state) =>
        state.status === 'new' ? { type: 'Queue', jobId: job.jobId, tenantId: job.tenantId, at } : null,
      cause,
    ).then(
      ({ events }) => {
        if (events.length === 0) this.resume(entry);
      },
      (error: unknown) => {
        this.onError(error, `queue ${job.jobId}`);
        this.options.clock.setTimeout(
          () => void this.enter(entry, cause, failures + 1),
          Math.min(this.errorRetryMs * 2 ** failures, MAX_ERROR_RETRY_MS),
        );
      },
    );
  }

  /**
   * A job whose stream already had decisions goes on from there. A round in flight when the last
   * placer stopped gets its answers no more (they went to that placer): its deadline ends it, which
   * releases every reservation and queues the job again.
   */
  private resume(entry: JobEntry): void {
    const { state, job } = entry;
    if (this.closed) return;
    if (awaitsRound(state)) {
      // Ready either way: capacity may have changed while no placer ran.
      this.queue = enqueue(this.queue, job.jobId, job.tenantId);
      this.wake();
    } else if (state.status === 'reserving' && state.round) {
      this.hold(job.jobId, state.round.allocations);
      this.armDeadline(entry, state.round.roundId, state.round.deadline);
    }
  }

  /**
   * Decides `command` on the job's stream once its earlier decisions are done, then acts on what
   * was committed. Rejects when the decision fails (nothing of it was kept).
   */
  private decide(
    entry: JobEntry,
    command: PlacementCommandInput,
    cause?: Causation,
    explanation?: PlacementOutcome,
  ): Promise<DecidedPlacement> {
    const { jobId } = entry.job;
    const decision = entry.decisions.then(async (): Promise<DecidedPlacement> => {
      if (this.closed) return { events: NO_DECISION, state: entry.state };
      const decided = await this.options.placements.decide(entry.announced, command, cause, explanation);
      entry.state = decided.state;
      for (const { event, cause: caused } of decided.events) {
        this.act(entry, event, caused);
        this.options.onDecision?.({ jobId, decision: event.type, fields: decisionFields(event) });
      }
      return decided;
    });
    entry.decisions = decision.catch(() => undefined);
    return decision;
  }

  /** A decision a timer or an answer asks for: its failure is reported. */
  private decideLater(entry: JobEntry, command: JobPlacementCommand): void {
    this.decide(entry, command).catch((error: unknown) =>
      this.onError(error, `${command.type} of ${entry.job.jobId}`),
    );
  }

  /** What a committed event asks of the world: the queue, held GPUs, reservations, releases, timers. */
  private act(entry: JobEntry, event: JobPlacementEvent, cause: Causation): void {
    const { job } = entry;
    switch (event.type) {
      case 'Queued':
        this.queue = enqueue(this.queue, job.jobId, job.tenantId);
        this.wake();
        return;
      case 'ParkedForCapacity':
        this.queue = park(enqueue(this.queue, job.jobId, job.tenantId), job.jobId);
        return;
      case 'RoundStarted':
        this.hold(job.jobId, event.data.allocations);
        this.armDeadline(entry, event.data.roundId, event.data.deadline);
        this.reserve(entry, event.data, cause);
        return;
      case 'RoundAborted':
        this.unhold(job.jobId);
        this.releaseAll(
          job.jobId,
          event.data.release,
          `reservation round ${event.data.roundId} aborted: ${event.data.cause}`,
          cause,
        );
        return;
      case 'DeclaredUnschedulable':
        this.queue = remove(this.queue, job.jobId);
        this.failedAttempts.delete(job.jobId);
        return;
      case 'Cancelled':
        this.queue = remove(this.queue, job.jobId);
        this.failedAttempts.delete(job.jobId);
        this.unhold(job.jobId);
        this.releaseAll(job.jobId, event.data.release, 'job cancelled', cause);
        return;
      case 'LateReservationReleased':
        this.releaseAll(
          job.jobId,
          [event.data.release],
          `late answer to aborted round ${event.data.roundId}`,
          cause,
        );
        return;
      case 'Placed':
      case 'ReservationAccepted':
      case 'ReservationDeclined':
      case 'WaitExpired':
        return;
    }
  }

  private hold(jobId: string, allocations: readonly PlacedAllocation[]): void {
    for (const a of allocations)
      for (const n of a.nodes)
        for (const g of n.gpuUuids) {
          this.held.set(g, jobId);
          this.heldOn.set(g, n.providerId);
        }
  }

  private unhold(jobId: string): void {
    for (const [gpu, owner] of this.held) {
      if (owner !== jobId) continue;
      this.held.delete(gpu);
      this.heldOn.delete(gpu);
    }
  }

  /** The round ends at its deadline unless every edge accepted before. */
  private armDeadline(entry: JobEntry, roundId: string, deadline: string): void {
    this.options.clock.setTimeout(
      () => this.decideLater(entry, { type: 'ExpireRound', roundId, at: this.now() }),
      Math.max(0, Date.parse(deadline) - this.options.clock.now().getTime()),
    );
  }

  /** Asks every node's edge of a started round to reserve, at once; each answer is a decision. */
  private reserve(
    entry: JobEntry,
    round: Extract<JobPlacementEvent, { type: 'RoundStarted' }>['data'],
    cause: Causation,
  ): void {
    const { job, plan } = entry;
    if (!plan.ok) return; // a round starts only for a plan
    for (const allocation of round.allocations) {
      const spec =
        plan.plan.allocations.find((a) => a.gang.name === allocation.name) ?? plan.plan.allocations[0]!;
      for (const node of allocation.nodes) {
        const request: ReserveRequest = {
          reservationId: node.reservationId,
          jobId: job.jobId,
          gpuUuids: node.gpuUuids,
          // What the node's ranks need besides their GPUs.
          cpuMillicores: node.ranks * spec.perRank.cpuMillicores,
          memoryBytes: node.ranks * spec.perRank.memoryBytes,
          image: spec.image,
          maxDurationMs: spec.maxDurationMs,
          subnet: edgeSubnetOf(job),
          asset: job.asset,
          // What the provider is paid: the clearing price of an auction, the subnet's fixed price
          // (a round recorded before prices were asked the job's max price).
          pricePerGpuHourMinor: round.prices?.[node.reservationId] ?? job.terms.maxPricePerGpuHour,
          holdUntil: round.holdUntil,
          // The edge checks it too, and declines ISOLATION_TOO_WEAK below it.
          minimumIsolation: job.terms.trust.minimumIsolation,
        };
        this.options.ports.reserve(node.providerId, request, cause, this.deadlineMs).then(
          (reply) =>
            this.decideLater(entry, {
              type: 'RecordAnswer',
              roundId: round.roundId,
              reservationId: node.reservationId,
              outcome: reply.outcome,
              reasons:
                reply.outcome === 'declined' ? reply.reasons.map((r) => `${r.code}: ${r.message}`) : [],
              at: this.now(),
            }),
          // No answer: the deadline decides (and leaves the silent edge out of the next round).
          (error: unknown) => this.onError(error, `reserve ${node.reservationId} on ${node.providerId}`),
        );
      }
    }
  }

  private releaseAll(
    jobId: string,
    targets: readonly ReservationTarget[],
    reason: string,
    cause: Causation,
  ): void {
    for (const t of targets) void this.release(jobId, t, reason, cause);
  }

  private async release(
    jobId: string,
    target: ReservationTarget,
    reason: string,
    cause: Causation,
  ): Promise<void> {
    const request = { jobId, reservationId: target.reservationId, reason: reason.slice(0, 256) };
    for (let attempt = 1; attempt <= this.releaseAttempts; attempt++) {
      try {
        await this.options.ports.release(target.providerId, request, cause);
        return;
      } catch (error) {
        if (attempt === this.releaseAttempts) this.onError(error, `release ${target.reservationId}`);
      }
    }
  }

  /**
   * Parked jobs try again at `atMs`: a candidate's jail ends then, and nothing else would say so
   * (a jail ends by the clock, not by an event). One timer per instant.
   */
  private wakeAt(atMs: number): void {
    if (this.jailWakes.has(atMs)) return;
    this.jailWakes.add(atMs);
    this.options.clock.setTimeout(
      () => {
        this.jailWakes.delete(atMs);
        this.wakeParked();
      },
      Math.max(0, atMs - this.options.clock.now().getTime()),
    );
  }

  private wakeParked(): void {
    this.capacityEpoch++;
    this.queue = markReady(this.queue);
    this.wake();
  }

  /** Starts draining the queue unless that runs already (or this replica does not place). */
  private wake(): void {
    if (this.draining || !this.active) return;
    this.draining = true;
    void this.drainQueue();
  }

  /** Tries the ready jobs one after another, fairly, until none is ready. */
  private async drainQueue(): Promise<void> {
    try {
      for (let next = takeNext(this.queue); next && this.active; next = takeNext(this.queue)) {
        this.queue = next.queue;
        const { jobId, tenantId } = next.entry;
        try {
          await this.tryToPlace(jobId);
          this.failedAttempts.delete(jobId);
        } catch (error) {
          this.onError(error, `schedule ${jobId}`);
          // An error (discovery did not answer, …) says nothing about capacity: parked, and ready
          // again after a backoff (or at the next capacity event, if that comes first).
          const failures = (this.failedAttempts.get(jobId) ?? 0) + 1;
          this.failedAttempts.set(jobId, failures);
          this.queue = park(enqueue(this.queue, jobId, tenantId), jobId);
          this.options.clock.setTimeout(
            () => {
              this.queue = markReady(this.queue, [jobId]);
              this.wake();
            },
            Math.min(this.errorRetryMs * 2 ** (failures - 1), MAX_ERROR_RETRY_MS),
          );
        }
      }
    } finally {
      // In the same turn as the last `takeNext`: a capacity event just after it wakes a new drain.
      this.draining = false;
    }
  }

  /**
   * One attempt at a job: candidates → the placement core → a reservation round, or a scheduling
   * failure (parked for capacity, or unschedulable).
   */
  private async tryToPlace(jobId: string): Promise<void> {
    const entry = this.jobs.get(jobId);
    if (!entry || !awaitsRound(entry.state)) return;
    const { job } = entry;
    if (!entry.plan.ok) {
      const { rejection } = entry.plan;
      await this.decide(entry, {
        type: 'RecordScheduleFailure',
        code: 'UnschedulableAndUnresolvable',
        allocation: rejection.allocation,
        message: rejection.message,
        reasons: rejection.reasons,
        at: this.now(),
      });
      return;
    }
    const { plan } = entry.plan;
    const epoch = this.capacityEpoch;
    const answers = await Promise.all(
      plan.allocations.map((a) => this.options.ports.findCandidates(a.query, entry.state.excluded)),
    );
    if (!awaitsRound(entry.state)) return; // cancelled meanwhile
    const round = async (lists: readonly (readonly CandidateProvider[])[]) => {
      const offered = new Map(
        plan.allocations.map((a, i) => [
          a.gang.name,
          new Set(lists[i]!.flatMap((c) => c.gpus.map((g) => g.uuid))),
        ]),
      );
      // One allocation: its CPU/memory per rank caps what a provider can give. An ensemble shares
      // the snapshot, so the edges' own CPU/memory checks (a decline, then a retry without them) decide.
      const only = plan.allocations.length === 1 ? plan.allocations[0] : undefined;
      const candidates = mergeCandidates(lists);
      const providerIds = candidates.map((c) => c.providerId);
      const measurements = this.options.measurements
        ? await this.options.measurements(providerIds)
        : NO_MEASUREMENTS;
      const standings = await this.options.standings(job.subnetId, providerIds);
      const atMs = this.options.clock.now().getTime();
      for (const id of providerIds) {
        const ends = jailEndsAfter(standings.get(id), atMs);
        if (ends !== null) this.wakeAt(ends);
      }
      const prices = candidatePrices(job, candidates);
      const pricing = job.terms.pricing.mode;
      const input = snapshotInput(
        pricing === 'auction' ? asBids(candidates, prices) : candidates,
        plan.gpuClasses,
        this.held,
        jobId,
        only ? rankCapacity(only.perRank, only.gang.gpusPerRank) : undefined,
        { measurements, atMs },
      );
      const registry = placementRegistry(offered, {
        standing: { subnetId: job.subnetId, standings, atMs },
        isolation: isolationView(job, candidates),
        prices,
        pricing,
      });
      const result = schedule(
        createSnapshot(input),
        {
          id: jobId,
          allocations: plan.allocations.map((a) => a.gang),
          edgeConstraints: plan.edgeConstraints,
        },
        // Explained every time: a person asks why only later, and the snapshot is gone by then.
        { seed: entry.state.attempt + 1, registry, explain: true },
      );
      return { result, prices };
    };
    const first = await round(answers);
    let result = first.result;
    if (!awaitsRound(entry.state)) return; // cancelled meanwhile
    if (result.code !== 'Success' && plan.allocations.some((a) => !a.query.includeSimulated)) {
      // Discovery was not asked for simulated GPUs the subnet refuses. A job that waits says whether
      // they are why: asked once more with them, the core counts them under `simulated-gpus`.
      const withSimulated = await Promise.all(
        plan.allocations.map((a) =>
          this.options.ports.findCandidates({ ...a.query, includeSimulated: true }, entry.state.excluded),
        ),
      );
      if (!awaitsRound(entry.state)) return; // cancelled meanwhile
      if (withSimulated.some((list, i) => list.length > answers[i]!.length)) {
        const explained = (await round(withSimulated)).result;
        if (!awaitsRound(entry.state)) return; // cancelled meanwhile
        if (explained.code !== 'Success') result = explained;
      }
    }
    if (result.code !== 'Success') {
      // The snapshot holds only what discovery offers now (free GPUs), so "no cluster could hold
      // it" means "not now" unless the request itself is malformed: wait for capacity then.
      const first = result.reasons[0];
      const malformed =
        first?.plugin === REQUEST_SHAPE ||
        (first?.plugin === ENSEMBLE && first.reason === EnsembleReason.InvalidEnsemble);
      await this.decide(entry, {
        type: 'RecordScheduleFailure',
        code: result.code === 'UnschedulableAndUnresolvable' && !malformed ? 'Unschedulable' : result.code,
        allocation: result.allocation,
        message: result.message,
        reasons: result.reasons,
        at: this.now(),
      });
      if (entry.state.status === 'waiting') {
        // Still no room: back in the queue (taking it out removed it), parked unless capacity
        // changed while this attempt ran — then it may fit already and goes again at once.
        this.queue = enqueue(this.queue, jobId, job.tenantId);
        if (this.capacityEpoch === epoch) this.queue = park(this.queue, jobId);
      }
      return;
    }
    const roundId = this.options.newId();
    // The prices of the chosen gang (an auction clears at its highest placed bid), before reserving.
    const { allocations, pricePerGpuHour, auction } = gangPricing(
      job,
      placedAllocations(result.placement, (_provider, i) => `${roundId}-${i}`),
      first.prices,
    );
    const startedAt = this.options.clock.now().getTime();
    const deadline = new Date(startedAt + this.deadlineMs).toISOString();
    const holdUntil = new Date(startedAt + this.holdMs).toISOString();
    const at = this.now();
    const explanation = result.explanation ? placementOutcome(result.explanation, at) : undefined;
    // Built from the job's state at the decision: a cancellation decided meanwhile starts no round.
    await this.decide(
      entry,
      (state) =>
        awaitsRound(state)
          ? {
              type: 'StartRound',
              roundId,
              allocations,
              deadline,
              holdUntil,
              at,
              prices: pricePerGpuHour,
              auction,
            }
          : null,
      undefined,
      explanation,
    );
  }
}
