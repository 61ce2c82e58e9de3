import {
  type Clock,
  foldEvents,
  type MessageRegistry,
  newEventId,
  type RankStartReply,
} from '@gpunet/contracts';
import type { Database, PostgresEventStore, Tx } from '@gpunet/eventing';
import {
  type ExecutionCommand,
  type ExecutionEvent,
  type ExecutionState,
  isTerminal,
  jobExecutionDecider,
  PUBLIC_EVENT_TYPES,
  readyToLaunch,
  reservationsOf,
  type StopOutcome,
  type ExecutionPolicy,
} from '../domain/job-execution.decider';
import { layoutRanks, type LaunchNetwork, startCommands } from '../domain/launch-spec';
import { gpuClassOf } from '../domain/usage';
import type { EdgeCommands, StopRanksRequest } from './edge-commands.port';
import type { ExecutionMetrics } from './execution.metrics';
import type { ProviderDirectory } from './provider-directory.port';
import type { PreparedNetwork, RankNetwork } from './rank-network.port';

/**
 * The shape of `ExecutionState` stored in `jobs.state`. Raise it whenever the state or `evolve`
 * changes: snapshots of another format are ignored and the log is folded again.
 */
const STATE_FORMAT = 1;

interface SnapshotRow {
  readonly state: ExecutionState | null;
  readonly version: number;
  readonly state_format: number | null;
}

/** The clock of deadlines: now, and a one-shot timer (tests pass a `FakeClock`). */
export interface ExecutionClock extends Clock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout?(id: unknown): void;
}

export interface JobProcessManagerOptions {
  readonly db: Database;
  readonly store: PostgresEventStore;
  readonly registry: MessageRegistry;
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

/**
 * Whether the manager has something to do for the job now or at a deadline: a job only submitted
 * (or only placed) waits for its other half in the database, not in the tick.
 */
const needsDriving = (s: ExecutionState): boolean =>
  s.phase === 'new' ? readyToLaunch(s) : !(isTerminal(s.phase) && s.released);

const endReason = (s: ExecutionState): StopRanksRequest['reason'] =>
  s.phase === 'cancelled' ? 'cancelled' : s.phase === 'completed' ? 'shutdown' : 'gang-failed';

/**
 * The process manager: every input becomes a command on the job aggregate, decided under the
 * job's row lock (load → decide → append, in the caller's transaction when there is one); after the
 * commit it does what the new state asks of the edges — start the attempt's ranks that have not
 * started, stop an attempt, stop and release everything at the end — and answers go back in as
 * commands. Everything it sends is idempotent on the edge and derived from the stored state, so a
 * restarted service (or a tick after a lost reply) simply does it again; a timer ticks every active
 * job so deadlines in its state are decided on time.
 */
export class JobProcessManager {
  private readonly decider;
  /** The last committed state of every job not finished (ended and released). */
  private readonly active = new Map<string, ExecutionState>();
  /** Commands sent and answered (or in flight) by this process, so a tick does not repeat them. */
  private readonly sent = new Set<string>();
  private readonly networks = new Map<string, PreparedNetwork>();
  private timer: unknown;
  private ticking: Promise<void> | undefined;
  private running = false;
  private startedAt = new Date(0);
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: JobProcessManagerOptions) {
    this.decider = jobExecutionDecider(options.policy);
  }

  /** Resumes every job that was active, then ticks every `tickMs`. */
  async start(): Promise<void> {
    const { db } = this.options;
    this.startedAt = this.options.clock.now();
    const rows = await db.query<{ job_id: string }>(
      `SELECT job_id FROM "${db.schema}".jobs WHERE active ORDER BY job_id`,
    );
    for (const { job_id } of rows) {
      const state = await db.transaction((tx) => this.load(tx, job_id));
      if (needsDriving(state)) this.active.set(job_id, state);
    }
    this.running = true;
    this.options.metrics.activeJobs.set(this.active.size);
    for (const [jobId, state] of this.active) this.reconcile(jobId, state);
    this.schedule();
  }

  /** Stops ticking and waits for the effects in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.options.clock.clearTimeout?.(this.timer);
    await this.ticking;
    await Promise.allSettled([...this.pending]);
  }

  /** The job's last committed state, if this process drives it. */
  state(jobId: string): ExecutionState | undefined {
    return this.active.get(jobId);
  }

  /** Decides `command` for `jobId` in its own transaction. */
  async handle(jobId: string, command: ExecutionCommand): Promise<ExecutionState> {
    const { after } = await this.options.db.transaction((tx) => this.handleIn(tx, jobId, command));
    return after;
  }

  /**
   * Decides `command` for `jobId` inside `tx` (a consumer's); effects run after the commit. With
   * `known`, a job execution never heard of is left alone (a status cannot create a job).
   */
  async handleIn(
    tx: Tx,
    jobId: string,
    command: ExecutionCommand,
    options: { known?: boolean } = {},
  ): Promise<{ before: ExecutionState; after: ExecutionState }> {
    if (!options.known)
      await tx.execute(
        `INSERT INTO "${tx.schema}".jobs (job_id) VALUES ($1) ON CONFLICT (job_id) DO NOTHING`,
        [jobId],
      );
    // One decision at a time per job, whoever decides (consumers, ticks, replies, other replicas).
    const locked = await tx.query<SnapshotRow>(
      `SELECT state, version, state_format FROM "${tx.schema}".jobs WHERE job_id = $1 FOR UPDATE`,
      [jobId],
    );
    const row = locked[0];
    if (!row) return { before: this.decider.initialState, after: this.decider.initialState };
    const { state, version } = await this.snapshot(tx, jobId, row);
    const decided = this.decider.decide(command, state);
    if (decided.length === 0) return { before: state, after: state };
    const next = decided.reduce((acc, e) => this.decider.evolve(acc, e), state);
    await this.append(tx, jobId, version, decided);
    const finished = isTerminal(next.phase) && next.released;
    await tx.execute(
      `UPDATE "${tx.schema}".jobs SET phase = $2, active = $3, state = $4, version = $5, state_format = $6,
         updated_at = now() WHERE job_id = $1`,
      [jobId, next.phase, !finished, JSON.stringify(next), version + decided.length, STATE_FORMAT],
    );
    tx.onCommit(() => this.committed(jobId, state, next, decided));
    return { before: state, after: next };
  }

  private async history(tx: Tx, jobId: string): Promise<ExecutionEvent[]> {
    const rows = await tx.query<{ type: string; data: unknown }>(
      `SELECT type, data FROM "${tx.schema}".job_events WHERE job_id = $1 ORDER BY version`,
      [jobId],
    );
    return rows.map((r) => ({ type: r.type, data: r.data }) as ExecutionEvent);
  }

  /** The job's state: its snapshot when it is of this code's format, else the fold of its log. */
  private async snapshot(
    tx: Tx,
    jobId: string,
    row: SnapshotRow,
  ): Promise<{ state: ExecutionState; version: number }> {
    if (row.state !== null && row.state_format === STATE_FORMAT)
      return { state: row.state, version: row.version };
    const history = await this.history(tx, jobId);
    return { state: foldEvents(this.decider, history), version: history.length };
  }

  private async load(tx: Tx, jobId: string): Promise<ExecutionState> {
    const rows = await tx.query<SnapshotRow>(
      `SELECT state, version, state_format FROM "${tx.schema}".jobs WHERE job_id = $1`,
      [jobId],
    );
    return rows[0] ? (await this.snapshot(tx, jobId, rows[0])).state : this.decider.initialState;
  }

  private async append(
    tx: Tx,
    jobId: string,
    version: number,
    events: readonly ExecutionEvent[],
  ): Promise<void> {
    const occurredAt = this.options.clock.now().toISOString();
    for (const [i, event] of events.entries()) {
      // The primary key (job_id, version) refuses a concurrent writer: its transaction fails.
      await tx.execute(
        `INSERT INTO "${tx.schema}".job_events (job_id, version, type, data) VALUES ($1, $2, $3, $4)`,
        [jobId, version + i + 1, event.type, JSON.stringify(event.data)],
      );
    }
    const published = events.filter((e) => PUBLIC_EVENT_TYPES.has(e.type));
    if (published.length === 0) return;
    await this.options.store.append(
      `job-${jobId}`,
      published.map((e) => ({
        eventId: newEventId(),
        type: e.type,
        version: this.options.registry.get(e.type).version,
        data: e.data,
        occurredAt,
        correlationId: jobId,
        causationId: null,
      })),
      { expectedVersion: 'any', tx },
    );
  }

  private committed(
    jobId: string,
    before: ExecutionState,
    next: ExecutionState,
    decided: readonly ExecutionEvent[],
  ): void {
    if (isTerminal(next.phase) && !isTerminal(before.phase)) {
      const failed = decided.find((e) => e.type === 'job.failed');
      const code = failed?.type === 'job.failed' ? failed.data.reason.code : next.phase;
      this.options.metrics.jobsEnded.inc({ outcome: next.phase, code });
    }
    if (!needsDriving(next)) {
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

  /** Sends what `state` asks for and has not been sent by this process yet. */
  private reconcile(jobId: string, state: ExecutionState): void {
    if (readyToLaunch(state)) this.once(`${jobId}/launch`, 'launch', () => this.launch(jobId, state));
    if (state.phase === 'launching' || state.phase === 'running') this.startRanks(jobId, state);
    if (state.phase === 'stopping' && state.stopping) {
      const { attempt, outcome } = state.stopping;
      for (const edgeId of new Set(state.ranks.map((r) => r.providerId)))
        this.once(`${jobId}/stop/${attempt}/${outcome.kind}/${edgeId}`, 'stop-ranks', () =>
          this.stopOn(edgeId, {
            jobId,
            attempt,
            reason: stopReason(outcome),
            graceMs: this.options.stopGraceMs,
          }),
        );
    }
    // Keyed by what it releases: a placement recorded while an earlier release ran (cancelled before
    // placement) gets a release of its own, not mistaken for the one already sent.
    if (isTerminal(state.phase) && !state.released) {
      const covering = reservationsOf(state)
        .map((r) => r.reservationId)
        .sort()
        .join(',');
      this.once(`${jobId}/release/${covering}`, 'release', () => this.release(jobId, state));
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

  private async prepareNetwork(jobId: string, state: ExecutionState): Promise<PreparedNetwork> {
    const known = this.networks.get(jobId);
    if (known) return known;
    const nodes = (state.placement?.allocations ?? []).flatMap((a) => a.nodes);
    const prepared = await this.options.network.prepare(
      { jobId, tenantId: state.placement?.tenantId ?? state.submission?.tenantId ?? jobId },
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
  private async launch(jobId: string, state: ExecutionState): Promise<void> {
    const spec = state.submission!.spec!;
    const placement = state.placement!;
    const network = await this.prepareNetwork(jobId, state);
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
    await this.handle(jobId, { type: 'LaunchJob', jobId, layout, now: this.options.clock.now() });
  }

  private startRanks(jobId: string, state: ExecutionState): void {
    const spec = state.submission?.spec;
    if (!spec) return;
    const attempt = state.attempt;
    const pendingRanks = state.ranks.filter((r) => !state.started[r.rank] && !state.exited[r.rank]);
    if (pendingRanks.length === 0) return;
    this.once(`${jobId}/start/${attempt}`, 'start-rank', async () => {
      // A restarted gang starts only once the previous attempt is told to stop everywhere.
      if (attempt > 1)
        await Promise.all(
          [...new Set(state.ranks.map((r) => r.providerId))].map((edgeId) =>
            this.stopOn(edgeId, {
              jobId,
              attempt: attempt - 1,
              reason: 'restart',
              graceMs: this.options.stopGraceMs,
            }),
          ),
        );
      const network = await this.prepareNetwork(jobId, state);
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
              reply = await this.options.edges.startRank(rank.providerId, command);
            } catch (error) {
              failures.push(error);
              return;
            }
            this.options.metrics.edgeCommands.inc({
              command: 'start-rank',
              outcome: reply.outcome === 'started' ? 'ok' : 'rejected',
            });
            await this.handle(jobId, {
              type: 'RecordStartReply',
              jobId,
              attempt,
              rank: command.rank,
              reply,
              now: this.options.clock.now(),
            });
          }),
      );
      // Unanswered starts are sent again on a later tick (the edge starts each rank once).
      if (failures.length > 0) throw failures[0];
    });
  }

  private async stopOn(edgeId: string, request: StopRanksRequest): Promise<void> {
    await this.options.edges.stopRanks(edgeId, request);
    this.options.metrics.edgeCommands.inc({ command: 'stop-ranks', outcome: 'ok' });
  }

  /** At the end: every rank of every attempt stopped, every reservation released, the network torn down. */
  private async release(jobId: string, state: ExecutionState): Promise<void> {
    const reservations = reservationsOf(state);
    const edges = new Set([
      ...state.ranks.map((r) => r.providerId),
      ...reservations.map((r) => r.providerId),
    ]);
    if (state.attempt > 0)
      await Promise.all(
        [...edges].map((edgeId) =>
          this.stopOn(edgeId, {
            jobId,
            attempt: null,
            reason: endReason(state),
            graceMs: this.options.stopGraceMs,
          }),
        ),
      );
    await Promise.all(
      reservations.map(async ({ providerId, reservationId }) => {
        await this.options.edges.release(providerId, reservationId, `job ${state.phase}`);
        this.options.metrics.edgeCommands.inc({ command: 'release', outcome: 'ok' });
      }),
    );
    await this.options.network.teardown(
      jobId,
      (state.placement?.allocations ?? []).flatMap((a) => a.nodes),
    );
    await this.handle(jobId, {
      type: 'MarkReleased',
      reservations: reservations.map((r) => r.reservationId),
      now: this.options.clock.now(),
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
        const now = this.options.clock.now();
        const next = await this.handle(jobId, {
          type: 'CheckDeadlines',
          now,
          listeningSince: this.startedAt,
        });
        // Retry what failed before (what was sent and answered is not sent again).
        if (this.running) this.reconcile(jobId, this.active.get(jobId) ?? next);
      } catch (error) {
        this.options.onError(error, `execution tick ${jobId}`);
      }
    }
  }
}
