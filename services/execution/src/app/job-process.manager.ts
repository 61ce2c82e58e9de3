import { type Causation, causedBy, type Clock, type RankStartReply, streamIdOf } from '@gpunet/contracts';
import type {
  CommandHandler,
  CommandMetadata,
  Decision,
  EventingRuntime,
  HandledCommand,
  Tx,
} from '@gpunet/eventing';
import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import {
  type ExecutionCommand,
  type ExecutionEvent,
  type ExecutionPolicy,
  type ExecutionState,
  isTerminal,
  jobExecutionDecider,
  PUBLIC_EVENT_TYPES,
  readyToLaunch,
  reservationsOf,
  type StopOutcome,
} from '../domain/job-execution.decider';
import { layoutRanks, type LaunchNetwork, startCommands } from '../domain/launch-spec';
import { gpuClassOf } from '../domain/usage';
import type { JobsRepository } from '../infra/jobs.repository';
import type { EdgeCommands, StopRanksRequest } from './edge-commands.port';
import type { ExecutionMetrics } from './execution.metrics';
import type { ProviderDirectory } from './provider-directory.port';
import type { PreparedNetwork, RankNetwork } from './rank-network.port';

/**
 * The shape of `ExecutionState` in the job's snapshots. Raise it whenever the state or `evolve`
 * changes: snapshots of another format are ignored and the stream is folded again.
 */
const STATE_FORMAT = 2;

/** The clock of deadlines: now, and a one-shot timer (tests pass a `FakeClock`). */
export interface ExecutionClock extends Clock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout?(id: unknown): void;
}

export interface JobProcessManagerOptions {
  readonly eventing: EventingRuntime;
  readonly jobs: JobsRepository;
  readonly clock: ExecutionClock;
  readonly policy: ExecutionPolicy;
  readonly edges: EdgeCommands;
  readonly network: RankNetwork;
  readonly directory: ProviderDirectory;
  readonly metrics: ExecutionMetrics;
  readonly tickMs: number;
  readonly stopGraceMs: number;
  readonly onError: (error: unknown, context: string) => void;
}

/** A job this process drives: its last committed state, and the event that led to it. */
interface DrivenJob {
  readonly state: ExecutionState;
  /** What the edge commands the state asks for follow from: the job's correlation, its last event. */
  readonly cause: Causation;
}

export type JobDecision = HandledCommand<ExecutionEvent, ExecutionState>;

/** A command as its sender builds it: the manager stamps it with the clock's time. */
export type JobCommand = ExecutionCommand extends infer C
  ? C extends unknown
    ? Omit<C, 'now'>
    : never
  : never;

const stopReason = (outcome: StopOutcome): StopRanksRequest['reason'] => {
  switch (outcome.kind) {
    case 'restart':
      return 'restart';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return outcome.code === 'MAX_DURATION'
        ? 'max-duration'
        : outcome.code === 'START_BARRIER'
          ? 'start-barrier'
          : 'gang-failed';
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
};

/** Ended and released: nothing is left to do for the job, ever. */
const finished = (s: ExecutionState): boolean => isTerminal(s.phase) && s.released;

/**
 * Whether the manager has something to do for the job now or at a deadline: a job only submitted
 * (or only placed) waits for its other half in the database, not in the tick.
 */
const needsDriving = (s: ExecutionState): boolean => (s.phase === 'new' ? readyToLaunch(s) : !finished(s));

const endReason = (s: ExecutionState): StopRanksRequest['reason'] =>
  s.phase === 'cancelled' ? 'cancelled' : s.phase === 'completed' ? 'shutdown' : 'gang-failed';

/**
 * The process manager: every input becomes a command on the job aggregate, decided by the
 * service's command handler on the job's stream (`job-<jobId>`) — one decision at a time per job
 * (the stream's lock: consumers, ticks, replies and other replicas queue), from its snapshot, the
 * private events kept in the stream beside the published ones, and the `jobs` row (phase, active)
 * written in the same transaction. After the commit it does what the new state asks of the edges —
 * start the attempt's ranks that have not started, stop an attempt, stop and release everything at
 * the end — and answers go back in as commands. Everything it sends is idempotent on the edge and
 * derived from the stored state, so a restarted service (or a tick after a lost reply) simply does
 * it again; a timer ticks every active job so deadlines in its state are decided on time.
 */
export class JobProcessManager implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly decisions: CommandHandler<ExecutionCommand, ExecutionEvent, ExecutionState>;
  /** Every job not finished (ended and released) that this process drives. */
  private readonly active = new Map<string, DrivenJob>();
  /** Commands sent and answered (or in flight) by this process, so a tick does not repeat them. */
  private readonly sent = new Set<string>();
  private readonly networks = new Map<string, PreparedNetwork>();
  private timer: unknown;
  private ticking: Promise<void> | undefined;
  private running = false;
  private startedAt = new Date(0);
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: JobProcessManagerOptions) {
    this.decisions = options.eventing.commandHandler({
      decider: jobExecutionDecider(options.policy),
      concurrency: 'serial',
      snapshots: { format: STATE_FORMAT },
      publishes: (e) => PUBLIC_EVENT_TYPES.has(e.type),
      effects: (decision) => this.record(decision),
    });
  }

  /** Resumes the jobs that were active before the consumers take new input. */
  onApplicationBootstrap(): Promise<void> {
    return this.start();
  }

  /** After the consumers stopped: no new effects (the ones in flight finish). */
  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Resumes every job that was active, then ticks every `tickMs`. */
  async start(): Promise<void> {
    const { eventing, jobs, clock } = this.options;
    this.startedAt = clock.now();
    for (const jobId of await jobs.activeJobIds()) {
      const streamId = streamIdOf('job', jobId);
      const { state, version } = await this.decisions.load(streamId);
      if (!needsDriving(state)) continue;
      const [last] = await eventing.store.readStream(streamId, { fromVersion: version });
      if (last) this.active.set(jobId, { state, cause: causedBy(last) });
    }
    this.running = true;
    this.options.metrics.activeJobs.set(this.active.size);
    for (const [jobId, job] of this.active) this.reconcile(jobId, job);
    this.schedule();
  }

  /** Stops ticking and waits for the effects in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.options.clock.clearTimeout?.(this.timer);
    await this.ticking;
    await Promise.allSettled([...this.pending]);
  }

  /**
   * Decides `command` for `jobId`, at the clock's time: inside `tx` when given (a consumer's: the
   * effects on the edges run after its commit), else in a transaction of its own. `metadata`: what
   * caused the command (a consumed message's causation); by default the job's own correlation and
   * the command as the cause.
   */
  /** The active jobs holding a reservation of `providerId`. */
  activeJobsOn(providerId: string): string[] {
    return [...this.active.entries()]
      .filter(([, job]) => reservationsOf(job.state).some((r) => r.providerId === providerId))
      .map(([jobId]) => jobId);
  }

  decide(jobId: string, command: JobCommand, metadata?: CommandMetadata, tx?: Tx): Promise<JobDecision> {
    const timed = { ...command, now: this.options.clock.now() } as ExecutionCommand;
    return this.decisions.handle(streamIdOf('job', jobId), timed, metadata, tx);
  }

  /** In the decision's transaction: where the job stands; after its commit, what it asks for. */
  private async record(decision: Decision<ExecutionCommand, ExecutionEvent, ExecutionState>): Promise<void> {
    const { tx, before, after, events, stored } = decision;
    // Every event names the job: the first one sets it.
    const jobId = after.jobId;
    if (jobId === null) throw new Error(`a decision on ${decision.streamId} left the job without an id`);
    await this.options.jobs.record(tx, jobId, after.phase, !finished(after));
    const cause = causedBy(stored.at(-1)!);
    tx.onCommit(() => this.committed(jobId, before, { state: after, cause }, events));
  }

  private committed(
    jobId: string,
    before: ExecutionState,
    next: DrivenJob,
    decided: readonly ExecutionEvent[],
  ): void {
    const { state } = next;
    if (isTerminal(state.phase) && !isTerminal(before.phase)) {
      const failed = decided.find((e) => e.type === 'job.failed');
      const code = failed?.type === 'job.failed' ? failed.data.reason.code : state.phase;
      this.options.metrics.jobsEnded.inc({ outcome: state.phase, code });
    }
    if (!needsDriving(state)) {
      this.active.delete(jobId);
      this.networks.delete(jobId);
      for (const key of [...this.sent]) if (key.startsWith(`${jobId}/`)) this.sent.delete(key);
    } else {
      this.active.set(jobId, next);
    }
    this.options.metrics.activeJobs.set(this.active.size);
    if (this.running) this.reconcile(jobId, next);
  }

  /** Runs `effect` in the background, reporting (never throwing) its failure. */
  private track(context: string, effect: () => Promise<unknown>): void {
    const p = effect().catch((error: unknown) => this.options.onError(error, context));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Sends what the job's state asks for and has not been sent by this process yet. */
  private reconcile(jobId: string, job: DrivenJob): void {
    const { state, cause } = job;
    if (readyToLaunch(state)) this.once(`${jobId}/launch`, 'launch', () => this.launch(jobId, job));
    if (state.phase === 'launching' || state.phase === 'running') this.startRanks(jobId, job);
    if (state.phase === 'stopping' && state.stopping) {
      const { attempt, outcome } = state.stopping;
      for (const edgeId of new Set(state.ranks.map((r) => r.providerId)))
        this.once(`${jobId}/stop/${attempt}/${outcome.kind}/${edgeId}`, 'stop-ranks', () =>
          this.stopOn(
            edgeId,
            { jobId, attempt, reason: stopReason(outcome), graceMs: this.options.stopGraceMs },
            cause,
          ),
        );
    }
    // Keyed by what it releases: a placement recorded while an earlier release ran (cancelled before
    // placement) gets a release of its own, not mistaken for the one already sent.
    if (isTerminal(state.phase) && !state.released) {
      const covering = reservationsOf(state)
        .map((r) => r.reservationId)
        .sort()
        .join(',');
      this.once(`${jobId}/release/${covering}`, 'release', () => this.release(jobId, job));
    }
  }

  /** Runs an effect once per key while it succeeds; a failed one is forgotten, so the next tick retries it. */
  private once(key: string, command: string, effect: () => Promise<void>): void {
    if (this.sent.has(key)) return;
    this.sent.add(key);
    this.track(`execution ${command} ${key}`, async () => {
      try {
        await effect();
      } catch (error) {
        this.sent.delete(key);
        this.options.metrics.edgeCommands.inc({ command, outcome: 'error' });
        throw error;
      }
    });
  }

  private async prepareNetwork(jobId: string, { state, cause }: DrivenJob): Promise<PreparedNetwork> {
    const known = this.networks.get(jobId);
    if (known) return known;
    const nodes = (state.placement?.allocations ?? []).flatMap((a) => a.nodes);
    const prepared = await this.options.network.prepare(
      { jobId, tenantId: state.placement?.tenantId ?? state.submission?.tenantId ?? jobId, cause },
      nodes,
    );
    this.networks.set(jobId, prepared);
    return prepared;
  }

  private launchNetwork(prepared: PreparedNetwork): LaunchNetwork {
    return {
      interface: prepared.interface,
      overlayAddressOf: (rank) => prepared.overlayAddressOf(rank),
      bindInterfaceOf: (rank) => prepared.bindInterfaceOf(rank),
    };
  }

  /** Lays the gang out (addresses, GPU classes), checks its start commands, and decides `LaunchJob`. */
  private async launch(jobId: string, job: DrivenJob): Promise<void> {
    const { state } = job;
    const spec = state.submission!.spec!;
    const placement = state.placement!;
    const network = await this.prepareNetwork(jobId, job);
    const providers = [...new Set(placement.allocations.flatMap((a) => a.nodes.map((n) => n.providerId)))];
    const models = await this.options.directory.gpuModels(providers);
    let layout = layoutRanks(
      spec,
      placement.allocations,
      (node) => network.addressOf(node),
      (node) => gpuClassOf(models.get(node.gpuUuids[0] ?? '') ?? null, state.submission!.gpuClasses),
    );
    if (layout.ok) {
      const check = startCommands(jobId, 1, spec, layout.layout.ranks, this.launchNetwork(network));
      if (!check.ok) layout = check;
    }
    await this.decide(jobId, { type: 'LaunchJob', jobId, layout });
  }

  private startRanks(jobId: string, job: DrivenJob): void {
    const { state, cause } = job;
    const spec = state.submission?.spec;
    if (!spec) return;
    const attempt = state.attempt;
    const pendingRanks = state.ranks.filter((r) => !state.started[r.rank] && !state.exited[r.rank]);
    if (pendingRanks.length === 0) return;
    this.once(`${jobId}/start/${attempt}`, 'start-rank', async () => {
      // A restarted gang starts only once the previous attempt is told to stop everywhere.
      if (attempt > 1)
        await this.stopEverywhere(
          state.ranks.map((r) => r.providerId),
          { jobId, attempt: attempt - 1, reason: 'restart', graceMs: this.options.stopGraceMs },
          cause,
        );
      const network = await this.prepareNetwork(jobId, job);
      const built = startCommands(jobId, attempt, spec, state.ranks, this.launchNetwork(network));
      if (!built.ok) throw new Error(`start commands of ${jobId}: ${built.message}`);
      const failures: unknown[] = [];
      await Promise.all(
        built.commands
          .filter((c) => pendingRanks.some((r) => r.rank === c.rank))
          .map(async (command) => {
            const rank = state.ranks.find((r) => r.rank === command.rank)!;
            let reply: RankStartReply;
            try {
              reply = await this.options.edges.startRank(rank.providerId, command, cause);
            } catch (error) {
              failures.push(error);
              return;
            }
            this.options.metrics.edgeCommands.inc({
              command: 'start-rank',
              outcome: reply.outcome === 'started' ? 'ok' : 'rejected',
            });
            await this.decide(jobId, {
              type: 'RecordStartReply',
              jobId,
              attempt,
              rank: command.rank,
              reply,
            });
          }),
      );
      // Unanswered starts are sent again on a later tick (the edge starts each rank once).
      if (failures.length > 0) throw failures[0];
    });
  }

  private async stopOn(edgeId: string, request: StopRanksRequest, cause: Causation): Promise<void> {
    await this.options.edges.stopRanks(edgeId, request, cause);
    this.options.metrics.edgeCommands.inc({ command: 'stop-ranks', outcome: 'ok' });
  }

  private async stopEverywhere(
    edgeIds: readonly string[],
    request: StopRanksRequest,
    cause: Causation,
  ): Promise<void> {
    await Promise.all([...new Set(edgeIds)].map((edgeId) => this.stopOn(edgeId, request, cause)));
  }

  /** At the end: every rank of every attempt stopped, every reservation released, the network torn down. */
  private async release(jobId: string, { state, cause }: DrivenJob): Promise<void> {
    const reservations = reservationsOf(state);
    if (state.attempt > 0)
      await this.stopEverywhere(
        [...state.ranks.map((r) => r.providerId), ...reservations.map((r) => r.providerId)],
        { jobId, attempt: null, reason: endReason(state), graceMs: this.options.stopGraceMs },
        cause,
      );
    await Promise.all(
      reservations.map(async ({ providerId, reservationId }) => {
        await this.options.edges.release(
          providerId,
          { jobId, reservationId, reason: `job ${state.phase}` },
          cause,
        );
        this.options.metrics.edgeCommands.inc({ command: 'release', outcome: 'ok' });
      }),
    );
    await this.options.network.teardown(
      jobId,
      (state.placement?.allocations ?? []).flatMap((a) => a.nodes),
    );
    await this.decide(jobId, {
      type: 'MarkReleased',
      reservations: reservations.map((r) => r.reservationId),
    });
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        this.schedule();
      });
    }, this.options.tickMs);
  }

  /** Decides the passing of time for every active job, and retries what is still owed. */
  async tick(): Promise<void> {
    for (const jobId of [...this.active.keys()]) {
      if (!this.running) return;
      try {
        await this.decide(jobId, { type: 'CheckDeadlines', listeningSince: this.startedAt });
        // Retry what failed before (what was sent and answered is not sent again).
        const job = this.active.get(jobId);
        if (this.running && job) this.reconcile(jobId, job);
      } catch (error) {
        this.options.onError(error, `execution tick ${jobId}`);
      }
    }
  }
}
