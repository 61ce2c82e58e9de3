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
import { createSnapshot, scheduleGang } from '@gpunet/scheduling';
import { emptyQueue, enqueue, type FairQueue, markReady, park, remove, takeNext } from '../domain/fair-queue';
import {
  type JobPlacementCommand,
  type JobPlacementEvent,
  jobPlacementDecider,
  type JobPlacementState,
  type ReservationTarget,
} from '../domain/job-placement.decider';
import { type FundedJob, gangRequestFor, placedAllocations, snapshotInput } from '../domain/placement-input';

/** A clock that can also wake the engine (tests pass `FakeClock`). */
export interface SchedulerClock extends Clock {
  setTimeout(callback: () => void, ms: number): unknown;
}

export type ReserveRequest = PayloadOf<typeof ReserveOnEdge>;

/** What the engine needs from the world: discovery, the edges, the event store. */
export interface PlacementPorts {
  findCandidates(job: FundedJob, excludeProviders: readonly string[]): Promise<readonly CandidateProvider[]>;
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
  /** Attempts to send one release before giving up (the edge's hold lapses at `holdUntil` anyway). */
  readonly releaseAttempts?: number;
  readonly onError?: (error: unknown, context: string) => void;
}

interface JobEntry {
  readonly job: FundedJob;
  state: JobPlacementState;
}

/**
 * The scheduler's loop: a fair queue of funded jobs; for the next ready job it asks discovery for
 * candidates (leaving out providers that declined or stayed silent before), runs the placement core,
 * then reserves on every chosen edge concurrently with a deadline. The decider turns answers into
 * placed / released-and-requeued / unschedulable; this class only carries out its events. Jobs the
 * core cannot place now are parked until a capacity event (`capacityChanged`), never polled.
 */
export class PlacementEngine {
  private readonly jobs = new Map<string, JobEntry>();
  private queue: FairQueue = emptyQueue;
  private pumping = false;
  private active = true;
  private readonly decider;
  /** GPUs of rounds in flight and placed jobs discovery may not know of yet: never offered twice. */
  private readonly held = new Map<string, string>();
  private emits: Promise<void> = Promise.resolve();
  private readonly deadlineMs: number;
  private readonly holdMs: number;
  private readonly releaseAttempts: number;
  private readonly onError: (error: unknown, context: string) => void;

  constructor(private readonly options: PlacementEngineOptions) {
    this.decider = jobPlacementDecider({ maxAttempts: options.maxAttempts ?? 5 });
    this.deadlineMs = options.reservationDeadlineMs ?? 5_000;
    this.holdMs = options.holdMs ?? 300_000;
    this.releaseAttempts = options.releaseAttempts ?? 3;
    this.onError = options.onError ?? (() => undefined);
  }

  /** A funded job enters the queue (idempotent per job id). */
  submit(job: FundedJob): void {
    if (this.jobs.has(job.jobId)) return;
    this.jobs.set(job.jobId, { job, state: this.decider.initialState });
    this.apply(job.jobId, { type: 'Queue', jobId: job.jobId, tenantId: job.tenantId, at: this.now() });
  }

  /** Capacity appeared somewhere (`provider.online`, reservations released …): parked jobs try again. */
  capacityChanged(): void {
    this.queue = markReady(this.queue);
    this.kick();
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
      case 'WaitingForCapacity':
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
          for (const n of a.nodes) for (const g of n.gpuUuids) this.held.set(g, job.jobId);
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
      case 'Unschedulable':
        this.queue = remove(this.queue, job.jobId);
        this.emit(job.jobId, JobUnschedulable, {
          jobId: job.jobId,
          tenantId: job.tenantId,
          code: event.data.code,
          allocation: event.data.allocation,
          message: event.data.message,
          reasons: event.data.reasons.slice(0, 64),
          at: event.data.at,
        });
        return;
      case 'Cancelled':
        this.queue = remove(this.queue, job.jobId);
        this.unhold(job.jobId);
        this.releaseAll(event.data.release, 'job cancelled');
        return;
      case 'LateReservationReleased':
        this.releaseAll([event.data.release], `late answer to aborted round ${event.data.roundId}`);
        return;
      case 'ReservationAccepted':
      case 'ReservationDeclined':
        return;
    }
  }

  private unhold(jobId: string): void {
    for (const [gpu, owner] of this.held) if (owner === jobId) this.held.delete(gpu);
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
    void this.pump().finally(() => {
      this.pumping = false;
    });
  }

  private async pump(): Promise<void> {
    for (let next = takeNext(this.queue); next && this.active; next = takeNext(this.queue)) {
      this.queue = next.queue;
      try {
        await this.attempt(next.entry.jobId);
      } catch (error) {
        this.onError(error, `schedule ${next.entry.jobId}`);
        // Try again on the next capacity event rather than spinning.
        this.queue = park(enqueue(this.queue, next.entry.jobId, next.entry.tenantId), next.entry.jobId);
      }
    }
  }

  private async attempt(jobId: string): Promise<void> {
    const entry = this.jobs.get(jobId);
    if (!entry || (entry.state.status !== 'queued' && entry.state.status !== 'waiting')) return;
    const { job } = entry;
    const candidates = await this.options.ports.findCandidates(job, entry.state.excluded);
    if (entry.state.status !== 'queued' && entry.state.status !== 'waiting') return; // cancelled meanwhile
    const input = snapshotInput(candidates, job.gpuClasses, this.held, jobId);
    const result = scheduleGang(createSnapshot(input), jobId, gangRequestFor(job), {
      seed: entry.state.attempt + 1,
    });
    if (result.code !== 'Success') {
      // The snapshot holds only what discovery offers now (free GPUs), so "no cluster could hold
      // it" means "not now" unless the request itself is malformed: wait for capacity then.
      const malformed = result.reasons[0]?.plugin === 'request-shape';
      this.apply(jobId, {
        type: 'ScheduleFailed',
        code: result.code === 'UnschedulableAndUnresolvable' && !malformed ? 'Unschedulable' : result.code,
        allocation: result.allocation,
        message: result.message,
        reasons: result.reasons,
        at: this.now(),
      });
      return;
    }
    const roundId = this.options.newId();
    const allocations = placedAllocations(result.placement, (_provider, i) => `${roundId}-${i}`);
    const startedAt = this.options.clock.now().getTime();
    const deadline = new Date(startedAt + this.deadlineMs).toISOString();
    const holdUntil = new Date(startedAt + this.holdMs).toISOString();
    this.apply(jobId, { type: 'StartRound', roundId, allocations, deadline, holdUntil, at: this.now() });
    this.options.clock.setTimeout(
      () => this.apply(jobId, { type: 'DeadlinePassed', roundId, at: this.now() }),
      this.deadlineMs,
    );
    const pricePerGpu = job.terms.maxPricePerGpuHour;
    for (const allocation of allocations) {
      for (const node of allocation.nodes) {
        const request: ReserveRequest = {
          reservationId: node.reservationId,
          jobId,
          gpuUuids: node.gpuUuids,
          cpuMillicores: 0,
          memoryBytes: 0,
          image: null,
          maxDurationMs: job.maxDurationSeconds * 1000,
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
