import {
  type CandidateProvider,
  type Clock,
  JobPlaced,
  JobQueued,
  JobUnschedulable,
  type MessageDefinition,
  type PayloadOf,
  type ReserveOnEdge,
  type ReservationReply,
} from '@gpunet/contracts';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import {
  createRegistry,
  createSnapshot,
  defaultRegistry,
  ENSEMBLE,
  EnsembleReason,
  GPU_MODEL,
  REQUEST_SHAPE,
  schedule,
} from '@gpunet/scheduling';
import { discoveryOfferFilter } from '../domain/discovery-offer.filter';
import { emptyQueue, enqueue, type FairQueue, markReady, park, remove, takeNext } from '../domain/fair-queue';
import {
  type JobPlacementCommand,
  type JobPlacementEvent,
  jobPlacementDecider,
  type JobPlacementState,
  type ReservationTarget,
} from '../domain/job-placement.decider';
import {
  type FundedJob,
  mergeCandidates,
  placedAllocations,
  rankCapacity,
  snapshotInput,
} from '../domain/placement-input';
import { modelWordsFilter } from '../domain/model-words.filter';
import { type CandidateQuery, planFor, type PlanResult } from '../domain/placement-plan';

/** A clock that can also wake the engine (tests pass `FakeClock`). */
export interface SchedulerClock extends Clock {
  setTimeout(callback: () => void, ms: number): unknown;
}

export type ReserveRequest = PayloadOf<typeof ReserveOnEdge>;

/** What the engine needs from the world: discovery, the edges, the event store. */
export interface PlacementPorts {
  /** Every page of discovery's answer to one allocation's query. */
  findCandidates(
    query: CandidateQuery,
    excludeProviders: readonly string[],
  ): Promise<readonly CandidateProvider[]>;
  /** Resolves with the edge's answer; rejects when it cannot be reached or does not answer in `timeoutMs`. */
  reserve(edgeId: string, request: ReserveRequest, timeoutMs: number): Promise<ReservationReply>;
  /** Idempotent on the edge (an unknown reservation counts as released). */
  release(edgeId: string, reservationId: string, reason: string): Promise<void>;
  /** Appends a wire event of the job's stream (event store + outbox). */
  emit(jobId: string, def: MessageDefinition, data: unknown): Promise<void>;
}

export interface PlacementEngineOptions {
  readonly ports: PlacementPorts;
  readonly clock: SchedulerClock;
  readonly newId: () => string;
  /** How long every chosen edge has to accept. Default 5 s. */
  readonly reservationDeadlineMs?: number;
  /** How long an accepted reservation is held for execution to start the job. Default 5 min. */
  readonly holdMs?: number;
  readonly maxAttempts?: number;
  /** A job queued this long without a placement is unschedulable (`Unschedulable`). Default 1 h. */
  readonly maxWaitMs?: number;
  /** Attempts to send one release before giving up (the edge's hold lapses at `holdUntil` anyway). */
  readonly releaseAttempts?: number;
  /**
   * After an attempt that failed with an error (discovery did not answer, …), the job tries again
   * this long later, doubling per consecutive error up to a minute. Default 2 s.
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
   * Told every decision as it is made (queued, waiting and why, a round started or aborted, placed,
   * unschedulable, cancelled): the service logs them, so that a job that waits says why.
   */
  readonly onDecision?: (decision: PlacementDecision) => void;
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

interface JobEntry {
  readonly job: FundedJob;
  readonly plan: PlanResult;
  state: JobPlacementState;
}

/**
 * The scheduler's loop: a fair queue of funded jobs; for the next ready job it asks discovery for
 * candidates (leaving out providers that declined or stayed silent before), runs the placement core,
 * then reserves on every chosen edge concurrently with a deadline. The decider turns answers into
 * placed / released-and-requeued / unschedulable; this class only carries out its events. Jobs the
 * core cannot place now are parked until a capacity event (`capacityChanged`, and once more shortly
 * after it), never polled; a job whose attempt failed with an error tries again after a backoff.
 */
export class PlacementEngine {
  private readonly jobs = new Map<string, JobEntry>();
  private queue: FairQueue = emptyQueue;
  /** Counts capacity events, so that an attempt knows whether one came while it ran. */
  private capacityEpoch = 0;
  private pumping = false;
  private active = true;
  private readonly decider;
  /** GPUs of rounds in flight and placed jobs discovery may not know of yet: never offered twice. */
  private readonly held = new Map<string, string>();
  /** The provider of every held GPU (GPU uuid → provider id). */
  private readonly heldOn = new Map<string, string>();
  private emits: Promise<void> = Promise.resolve();
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
  private readonly onError: (error: unknown, context: string) => void;

  constructor(private readonly options: PlacementEngineOptions) {
    this.decider = jobPlacementDecider({ maxAttempts: options.maxAttempts ?? 5 });
    this.deadlineMs = options.reservationDeadlineMs ?? 5_000;
    this.holdMs = options.holdMs ?? 300_000;
    this.maxWaitMs = options.maxWaitMs ?? 3_600_000;
    this.releaseAttempts = options.releaseAttempts ?? 3;
    this.errorRetryMs = options.errorRetryMs ?? 2_000;
    this.capacitySettleMs = options.capacitySettleMs ?? 1_000;
    this.onError = options.onError ?? (() => undefined);
  }

  /**
   * A funded job whose spec is known enters the queue (idempotent per job id). `spec` null: a v1
   * job, placed from its terms. `queuedSince`: when it first entered a queue (a restart keeps its
   * maximum wait running from then); default now.
   */
  submit(job: FundedJob, spec: NormalizedSpec | null = null, queuedSince?: Date): void {
    if (this.jobs.has(job.jobId)) return;
    this.jobs.set(job.jobId, { job, plan: planFor(job, spec), state: this.decider.initialState });
    this.apply(job.jobId, { type: 'Queue', jobId: job.jobId, tenantId: job.tenantId, at: this.now() });
    const since = (queuedSince ?? this.options.clock.now()).getTime();
    const left = Math.max(0, since + this.maxWaitMs - this.options.clock.now().getTime());
    this.options.clock.setTimeout(
      () => this.apply(job.jobId, { type: 'ExpireWait', maxWaitMs: this.maxWaitMs, at: this.now() }),
      left,
    );
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

  private wakeParked(): void {
    this.capacityEpoch++;
    this.queue = markReady(this.queue);
    this.kick();
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

  cancel(jobId: string): void {
    if (!this.jobs.has(jobId)) return;
    this.apply(jobId, { type: 'Cancel', at: this.now() });
  }

  /** Only an active engine starts rounds (the replica holding the placer lease). */
  setActive(active: boolean): void {
    this.active = active;
    if (active) this.kick();
  }

  status(jobId: string): JobPlacementState | undefined {
    return this.jobs.get(jobId)?.state;
  }

  /** Resolves when every event decided so far has been appended. */
  flushed(): Promise<void> {
    return this.emits;
  }

  private now(): string {
    return this.options.clock.now().toISOString();
  }

  private apply(jobId: string, command: JobPlacementCommand): void {
    const entry = this.jobs.get(jobId);
    if (!entry) return;
    const events = this.decider.decide(command, entry.state);
    for (const event of events) {
      entry.state = this.decider.evolve(entry.state, event);
      this.carryOut(entry, event);
      this.options.onDecision?.({ jobId, decision: event.type, fields: decisionFields(event) });
    }
  }

  private carryOut(entry: JobEntry, event: JobPlacementEvent): void {
    const { job } = entry;
    switch (event.type) {
      case 'Queued':
        this.emit(job.jobId, JobQueued, {
          jobId: job.jobId,
          tenantId: job.tenantId,
          attempt: event.data.attempt,
          reason: event.data.reason,
          at: event.data.at,
        });
        this.queue = enqueue(this.queue, job.jobId, job.tenantId);
        this.kick();
        return;
      case 'ParkedForCapacity':
        this.emit(job.jobId, JobQueued, {
          jobId: job.jobId,
          tenantId: job.tenantId,
          attempt: Math.max(1, entry.state.attempt),
          reason: event.data.message.slice(0, 1024),
          at: event.data.at,
        });
        this.queue = park(enqueue(this.queue, job.jobId, job.tenantId), job.jobId);
        return;
      case 'RoundStarted':
        for (const a of event.data.allocations)
          for (const n of a.nodes)
            for (const g of n.gpuUuids) {
              this.held.set(g, job.jobId);
              this.heldOn.set(g, n.providerId);
            }
        return;
      case 'RoundAborted':
        this.unhold(job.jobId);
        this.releaseAll(
          event.data.release,
          `reservation round ${event.data.roundId} aborted: ${event.data.cause}`,
        );
        return;
      case 'Placed': {
        const round = entry.state.round;
        if (!round) return;
        this.emit(job.jobId, JobPlaced, {
          jobId: job.jobId,
          tenantId: job.tenantId,
          asset: job.asset,
          allocations: round.allocations,
          holdUntil: round.holdUntil,
          attempt: entry.state.attempt,
          at: event.data.at,
        });
        return;
      }
      case 'DeclaredUnschedulable':
        this.queue = remove(this.queue, job.jobId);
        this.failedAttempts.delete(job.jobId);
        this.emit(job.jobId, JobUnschedulable, {
          jobId: job.jobId,
          tenantId: job.tenantId,
          code: event.data.code,
          // Within the contract's bounds: a sentence naming many allocations or GPUs is cut, not lost.
          allocation: event.data.allocation?.slice(0, 128) ?? null,
          message: event.data.message.slice(0, 2048),
          reasons: event.data.reasons.slice(0, 64).map((r) => ({
            ...r,
            plugin: r.plugin.slice(0, 128),
            reason: r.reason.slice(0, 128),
            message: r.message.slice(0, 1024),
          })),
          at: event.data.at,
        });
        return;
      case 'Cancelled':
        this.queue = remove(this.queue, job.jobId);
        this.failedAttempts.delete(job.jobId);
        this.unhold(job.jobId);
        this.releaseAll(event.data.release, 'job cancelled');
        return;
      case 'LateReservationReleased':
        this.releaseAll([event.data.release], `late answer to aborted round ${event.data.roundId}`);
        return;
      case 'ReservationAccepted':
      case 'ReservationDeclined':
      case 'WaitExpired':
        return;
    }
  }

  private unhold(jobId: string): void {
    for (const [gpu, owner] of this.held) {
      if (owner !== jobId) continue;
      this.held.delete(gpu);
      this.heldOn.delete(gpu);
    }
  }

  private emit(jobId: string, def: MessageDefinition, data: unknown): void {
    this.emits = this.emits
      .then(() => this.options.ports.emit(jobId, def, data))
      .catch((error: unknown) => this.onError(error, `append ${def.type} of ${jobId}`));
  }

  private releaseAll(targets: readonly ReservationTarget[], reason: string): void {
    for (const t of targets) void this.release(t, reason);
  }

  private async release(target: ReservationTarget, reason: string): Promise<void> {
    for (let attempt = 1; attempt <= this.releaseAttempts; attempt++) {
      try {
        await this.options.ports.release(target.providerId, target.reservationId, reason.slice(0, 256));
        return;
      } catch (error) {
        if (attempt === this.releaseAttempts) this.onError(error, `release ${target.reservationId}`);
      }
    }
  }

  private kick(): void {
    if (this.pumping || !this.active) return;
    this.pumping = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (let next = takeNext(this.queue); next && this.active; next = takeNext(this.queue)) {
        this.queue = next.queue;
        const { jobId, tenantId } = next.entry;
        try {
          await this.attempt(jobId);
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
              this.kick();
            },
            Math.min(this.errorRetryMs * 2 ** (failures - 1), MAX_ERROR_RETRY_MS),
          );
        }
      }
    } finally {
      // In the same turn as the last `takeNext`: a capacity event just after it kicks a new pump.
      this.pumping = false;
    }
  }

  private async attempt(jobId: string): Promise<void> {
    const entry = this.jobs.get(jobId);
    if (!entry || (entry.state.status !== 'queued' && entry.state.status !== 'waiting')) return;
    const { job } = entry;
    if (!entry.plan.ok) {
      const { rejection } = entry.plan;
      this.apply(jobId, {
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
    if (entry.state.status !== 'queued' && entry.state.status !== 'waiting') return; // cancelled meanwhile
    const offered = new Map(
      plan.allocations.map((a, i) => [
        a.gang.name,
        new Set(answers[i]!.flatMap((c) => c.gpus.map((g) => g.uuid))),
      ]),
    );
    // One allocation: its CPU/memory per rank caps what a provider can give. An ensemble shares the
    // snapshot, so the edges' own CPU/memory checks (a decline, then a retry without them) decide.
    const only = plan.allocations.length === 1 ? plan.allocations[0] : undefined;
    const input = snapshotInput(
      mergeCandidates(answers),
      plan.gpuClasses,
      this.held,
      jobId,
      only ? rankCapacity(only.perRank, only.gang.gpusPerRank) : undefined,
    );
    const registry = createRegistry({
      filters: [
        ...defaultRegistry.filters.map((f) => (f.name === GPU_MODEL ? modelWordsFilter : f)),
        discoveryOfferFilter(offered),
      ],
    });
    const result = schedule(
      createSnapshot(input),
      { id: jobId, allocations: plan.allocations.map((a) => a.gang), edgeConstraints: plan.edgeConstraints },
      { seed: entry.state.attempt + 1, registry },
    );
    if (result.code !== 'Success') {
      // The snapshot holds only what discovery offers now (free GPUs), so "no cluster could hold
      // it" means "not now" unless the request itself is malformed: wait for capacity then.
      const first = result.reasons[0];
      const malformed =
        first?.plugin === REQUEST_SHAPE ||
        (first?.plugin === ENSEMBLE && first.reason === EnsembleReason.InvalidEnsemble);
      this.apply(jobId, {
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
    const allocations = placedAllocations(result.placement, (_provider, i) => `${roundId}-${i}`);
    const startedAt = this.options.clock.now().getTime();
    const deadline = new Date(startedAt + this.deadlineMs).toISOString();
    const holdUntil = new Date(startedAt + this.holdMs).toISOString();
    this.apply(jobId, { type: 'StartRound', roundId, allocations, deadline, holdUntil, at: this.now() });
    this.options.clock.setTimeout(
      () => this.apply(jobId, { type: 'ExpireRound', roundId, at: this.now() }),
      this.deadlineMs,
    );
    const pricePerGpu = job.terms.maxPricePerGpuHour;
    for (const allocation of allocations) {
      const spec = plan.allocations.find((a) => a.gang.name === allocation.name) ?? plan.allocations[0]!;
      for (const node of allocation.nodes) {
        const request: ReserveRequest = {
          reservationId: node.reservationId,
          jobId,
          gpuUuids: node.gpuUuids,
          // What the node's ranks need besides their GPUs.
          cpuMillicores: node.ranks * spec.perRank.cpuMillicores,
          memoryBytes: node.ranks * spec.perRank.memoryBytes,
          image: spec.image,
          maxDurationMs: spec.maxDurationMs,
          subnet: /^[a-z0-9][a-z0-9-]{0,62}$/.test(job.subnetId) ? job.subnetId : null,
          asset: job.asset,
          pricePerGpuHourMinor: pricePerGpu,
          holdUntil,
        };
        this.options.ports.reserve(node.providerId, request, this.deadlineMs).then(
          (reply) =>
            this.apply(jobId, {
              type: 'RecordAnswer',
              roundId,
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
}
