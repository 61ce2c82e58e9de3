import {
  buildEnvelope,
  type Causation,
  causedBy,
  streamIdOf,
  type Clock,
  createRegistry,
  type EdgeReservation,
  type Gpu,
  type PayloadOf,
  RankLogChunk,
  type RankRejection,
  type RankStartReply,
  RankStatusReported,
  signingInput,
  StartRankOnEdge,
  StopRanksOnEdge,
  type StopRanksReply,
  type ValidationIssue,
} from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Policy } from '../domain/policy/policy';
import { checkStartRank, type StartRankRequest } from '../domain/ranks/start-rank.check';
import { JetStreamOutbox } from '../infra/js-outbox';
import type { EdgeLogger } from '../infra/logger';
import { MAX_LINE_CHARS } from '../infra/runtime/line-splitter';
import type { RankRecord } from '../infra/state.store';
import { removeWorkspaces, resolveWorkingDir } from '../infra/workspace';
import { type LogBatching, LogShipper } from './log-shipper';
import {
  RANK_LABELS,
  type RankExit,
  type RankLaunch,
  type RankRuntime,
  RankStartError,
  type RunningRank,
} from './rank-runtime.port';

/** What the rank agent needs from the edge agent that mounts it. */
export interface RankAgentHost {
  /** Runs state changes one at a time with the edge's other changes (never call it from inside). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** The ranks in the state file. */
  ranks(): readonly RankRecord[];
  /** Replaces and persists the ranks (call inside `exclusive`). */
  saveRanks(ranks: readonly RankRecord[]): Promise<void>;
  /** The policy, the GPUs and the active reservations (in-use ones included). */
  context(): {
    readonly policy: Pick<Policy, 'images' | 'maxJobDurationMs'>;
    readonly gpus: readonly Pick<Gpu, 'uuid' | 'vendor'>[];
    readonly reservations: readonly EdgeReservation[];
  };
  /** Whether the NATS connection is up (log chunks are dropped, not buffered, while it is down). */
  connected(): boolean;
}

export interface RankAgentOptions {
  readonly edgeId: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly prefix: string;
  readonly host: RankAgentHost;
  readonly runtimes: readonly RankRuntime[];
  /** Rank workspaces live under `dataDir/workspaces/<jobId>/rank-<rank>` (0700). */
  readonly dataDir: string;
  readonly clock: Clock;
  readonly log: EdgeLogger;
  readonly random: () => number;
  readonly publishTimeoutMs: number;
  /**
   * Signs a status with the edge's key (ed25519 over `signingInput`, base64url): execution pays
   * from the statuses' wall seconds and refuses an unsigned or forged one.
   */
  readonly sign: (text: string) => string;
  readonly logBatching?: LogBatching;
  /** Grace between SIGTERM and SIGKILL when the edge stops a rank itself (max duration, shutdown). Default 10 s. */
  readonly stopGraceMs?: number;
  /**
   * The network namespace of a job's overlay on this edge; absent: this edge runs no overlays and
   * rejects starts that name one (RUNTIME_UNAVAILABLE).
   */
  readonly netnsOf?: (jobId: string, overlay: NonNullable<StartRankRequest['overlay']>) => string | null;
  /**
   * Development and CI providers: a directory of job code. The process runtime has no image to
   * bring a job's code, so every entry of this directory appears in each process rank's workspace
   * as a symbolic link (`docs/examples/jobs/ddp_train.py` resolves from the rank's cwd). Links are
   * read through, never written through: a rank writes only its own workspace entries.
   */
  readonly jobFiles?: string;
}

interface Live {
  record: RankRecord;
  readonly handle: RunningRank;
  readonly logs: { readonly stdout: LogShipper; readonly stderr: LogShipper };
  /** Monotonic start (wall seconds do not follow clock jumps). */
  readonly startedMono: number;
  stopReason: string | null;
  deadline: NodeJS.Timeout | undefined;
  /** Monotonic time of the rank's last output line (its progress signal). */
  lastOutputMono: number;
  progress: NodeJS.Timeout | undefined;
}

const commandRegistry = createRegistry([StartRankOnEdge, StopRanksOnEdge]);

const keyOf = (r: { jobId: string; attempt: number; rank: number }): string =>
  `${r.jobId}/${r.attempt}/${r.rank}`;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Links every entry of `jobFiles` into `workspace` that the workspace does not have yet. */
const linkJobFiles = async (jobFiles: string, workspace: string): Promise<void> => {
  for (const entry of await readdir(jobFiles)) {
    const target = join(jobFiles, entry);
    const link = join(workspace, entry);
    // An entry the rank made itself (an earlier attempt's output) stays as it is.
    await symlink(target, link).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
};

/**
 * Runs the ranks of placed jobs on this edge: answers `cmd.edge.<id>.start-rank.v1` (validated
 * against the contract, the reservation, the policy and the configuration; a rejected start starts
 * nothing) and `…stop-ranks.v1`, ships the ranks' output as `RankLogChunk`s (core NATS, bounded,
 * never blocking a rank), reports `RankStatusReported` to JetStream (`running` at start and every
 * heartbeat, `exited` once — queued and retried until acknowledged, across outages and restarts),
 * stops ranks at their max duration, and cleans up after a crash of the edge.
 */
export class RankAgent {
  private readonly live = new Map<string, Live>();
  private readonly outbox: JetStreamOutbox;
  private subscriptions: Subscription[] = [];
  private stopping = false;
  /** Starts under way (a docker pull may take minutes): a duplicate waits for the first. */
  private readonly inFlight = new Map<string, { req: StartRankRequest; reply: Promise<RankStartReply> }>();
  /** Recent stop-ranks, numbered: a start under way when one arrived is stopped once it exists. */
  private recentStops: (PayloadOf<typeof StopRanksOnEdge> & { seq: number })[] = [];
  private stopSeq = 0;
  /** Last sequence a status was signed with (never below the clock in ms, so it grows across restarts). */
  private statusSequence = 0;

  constructor(private readonly options: RankAgentOptions) {
    this.outbox = new JetStreamOutbox({
      publish: async (subject, payload, msgID) => {
        await options.js.publish(subject, payload, { msgID, timeout: options.publishTimeoutMs });
      },
      log: options.log,
      random: options.random,
    });
  }

  /** Ranks running now. */
  get running(): number {
    return this.live.size;
  }

  /** Statuses not yet acknowledged by JetStream. */
  get pendingStatuses(): number {
    return this.outbox.size;
  }

  /**
   * Reaps what a crashed earlier run left (processes, containers; unless `reaped`: the caller did),
   * reports the ranks the state file
   * says were running as exited (`edge-restart`), re-queues exited statuses never acknowledged, and
   * starts answering commands.
   */
  async start(options: { reaped?: boolean } = {}): Promise<void> {
    if (!options.reaped) await reapOrphans(this.options.runtimes, this.options.edgeId, this.options.log);
    await this.options.host.exclusive(async () => {
      const now = this.options.clock.now();
      const ranks = this.options.host.ranks().map((r) =>
        r.state === 'running'
          ? {
              ...r,
              state: 'exited' as const,
              exitedAt: now.toISOString(),
              stopReason: 'edge-restart',
              wallSeconds: Math.max(0, (now.getTime() - Date.parse(r.startedAt)) / 1000),
              reported: false,
            }
          : r,
      );
      await this.options.host.saveRanks(ranks);
      for (const r of ranks) if (r.state === 'exited' && !r.reported) this.queueStatus(r);
    });
    const { nc, edgeId, prefix } = this.options;
    this.subscriptions = [
      nc.subscribe(StartRankOnEdge.subject({ edgeId }, prefix), { callback: (e, m) => this.onMessage(e, m) }),
      nc.subscribe(StopRanksOnEdge.subject({ edgeId }, prefix), { callback: (e, m) => this.onMessage(e, m) }),
    ];
  }

  /**
   * Stops answering and stops every running rank (reason `shutdown`: a provider's graceful stop ends
   * its ranks rather than leave them unsupervised), waiting for their exits to be recorded and queued.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const s of this.subscriptions) s.unsubscribe();
    // Starts under way finish first (and stop themselves at once: `stopping` is set).
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.reply));
    const exits = [...this.live.values()].map((l) => {
      l.stopReason ??= 'shutdown';
      return l.handle.stop(this.options.stopGraceMs ?? 10_000);
    });
    await Promise.allSettled(exits);
    // The exits are recorded through `exclusive`; wait for those to have run (bounded: a runtime
    // that never reports an exit must not keep the edge from stopping).
    const until = performance.now() + 30_000;
    while (this.live.size > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
    for (const l of this.live.values()) {
      clearTimeout(l.deadline);
      clearTimeout(l.progress);
    }
  }

  /** Resolves once every queued status was acknowledged. */
  drained(): Promise<void> {
    return this.outbox.drained();
  }

  /** Gives up on what is still queued (the next start re-queues exited statuses from the state file). */
  close(): void {
    this.outbox.close();
  }

  /** After a reconnect: retry queued statuses now. */
  reconnected(): void {
    this.outbox.retryNow();
  }

  /** Reports every running rank as still running (called on the edge's heartbeat). */
  heartbeat(): void {
    for (const l of this.live.values()) this.queueStatus(this.snapshotOf(l));
  }

  /** Stops the ranks running on a reservation that was released (reason `reservation-released`). */
  stopReservation(reservationId: string): number {
    let n = 0;
    for (const l of this.live.values())
      if (l.record.reservationId === reservationId) {
        l.stopReason ??= 'reservation-released';
        void l.handle.stop(this.options.stopGraceMs ?? 10_000);
        n += 1;
      }
    return n;
  }

  /**
   * Forgets exited, reported ranks whose reservation is gone and removes the workspaces of jobs the
   * edge no longer holds anything for (call inside `exclusive`).
   */
  async prune(activeReservationIds: ReadonlySet<string>, activeJobIds: ReadonlySet<string>): Promise<void> {
    const before = this.options.host.ranks();
    const kept = before.filter(
      (r) => r.state === 'running' || !r.reported || activeReservationIds.has(r.reservationId),
    );
    if (kept.length === before.length) return;
    await this.options.host.saveRanks(kept);
    const gone = new Set(before.map((r) => r.jobId));
    for (const r of kept) gone.delete(r.jobId);
    for (const job of gone)
      if (!activeJobIds.has(job))
        await removeWorkspaces(join(this.workspaces(), job)).catch((e: unknown) =>
          this.options.log('warn', 'could not remove a workspace', { jobId: job, error: String(e) }),
        );
  }

  // ---------------------------------------------------------------------------------------------

  private workspaces(): string {
    return join(this.options.dataDir, 'workspaces');
  }

  private onMessage(error: Error | null, msg: Msg): void {
    if (error) {
      this.options.log('error', 'rank command subscription', { error: String(error) });
      return;
    }
    // Not inside `exclusive`: a start may take long (docker pulls) and must not hold up the edge's
    // reservations and reports; the state writes below take `exclusive` themselves.
    void this.handle(msg).catch((e: unknown) => {
      // Never leaves the caller without an answer.
      this.options.log('error', 'rank command failed', { subject: msg.subject, error: String(e) });
      const stop = msg.subject.endsWith('.stop-ranks.v1');
      this.respond(
        msg,
        stop
          ? ({ jobId: '', stopping: 0 } satisfies StopRanksReply)
          : rejected('', null, [{ code: 'START_FAILED', message: String(e).slice(0, 1024), field: null }]),
      );
    });
  }

  private respond(msg: Msg, reply: RankStartReply | StopRanksReply): void {
    try {
      if (msg.reply) msg.respond(JSON.stringify(reply));
    } catch (error) {
      this.options.log('warn', 'could not answer a rank command', { error: String(error) });
    }
  }

  private async handle(msg: Msg): Promise<void> {
    let raw: unknown;
    try {
      raw = msg.json();
    } catch {
      raw = undefined;
    }
    this.respond(msg, await this.answer(msg.subject, raw));
  }

  /**
   * The answer to one command as it arrived on `subject` (anything: it is validated here). Never
   * throws for bad input.
   */
  async answer(subject: string, raw: unknown): Promise<RankStartReply | StopRanksReply> {
    const stop = subject.endsWith('.stop-ranks.v1');
    let envelope;
    try {
      envelope = commandRegistry.parse(raw);
      if ((envelope.type === StopRanksOnEdge.type) !== stop)
        throw Object.assign(new Error(`${envelope.type} does not belong on ${subject}`), {
          issues: [{ path: 'type', message: `${envelope.type} does not belong on this subject` }],
        });
    } catch (error) {
      const issues = (error as { issues?: ValidationIssue[] }).issues ?? [
        { path: '', message: String(error) },
      ];
      const data = typeof raw === 'object' && raw !== null ? (raw as { data?: unknown }).data : undefined;
      const fields = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
      const jobId = typeof fields['jobId'] === 'string' ? fields['jobId'].slice(0, 256) : '';
      this.options.log('warn', 'invalid rank command refused', { subject, issues: issues.slice(0, 8) });
      if (stop) return { jobId, stopping: 0 };
      const rank = fields['rank'];
      return rejected(
        jobId,
        typeof rank === 'number' && Number.isSafeInteger(rank) ? rank : null,
        issues.slice(0, 64).map((i) => ({
          code: 'INVALID_REQUEST' as const,
          message: i.message.slice(0, 1024),
          field: i.path.replace(/^data\.?/, '').slice(0, 256) || null,
        })),
      );
    }
    if (envelope.type === StopRanksOnEdge.type) return this.stopRanks(envelope.data);
    if (this.stopping)
      return rejected(envelope.data.jobId, envelope.data.rank, [
        { code: 'RUNTIME_UNAVAILABLE', message: 'the edge is shutting down', field: null },
      ]);
    return this.startOnce(envelope.data, causedBy(envelope));
  }

  /** One start per (job, attempt, rank) at a time: a duplicate of a start under way gets its outcome. */
  private async startOnce(req: StartRankRequest, cause: Causation): Promise<RankStartReply> {
    const key = keyOf(req);
    const running = this.inFlight.get(key);
    if (running) {
      const reply = await running.reply;
      return reply.outcome === 'started' ? { ...reply, created: false } : reply;
    }
    const reply = this.startRank(req, cause);
    this.inFlight.set(key, { req, reply });
    try {
      return await reply;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private matches(stop: PayloadOf<typeof StopRanksOnEdge>, r: { jobId: string; attempt: number }): boolean {
    return r.jobId === stop.jobId && (stop.attempt === null || r.attempt <= stop.attempt);
  }

  private stopRanks(req: PayloadOf<typeof StopRanksOnEdge>): StopRanksReply {
    let stopping = 0;
    for (const l of this.live.values()) {
      if (!this.matches(req, l.record)) continue;
      l.stopReason ??= req.reason;
      void l.handle.stop(req.graceMs);
      stopping += 1;
    }
    // Starts under way are stopped as soon as they exist.
    this.stopSeq += 1;
    this.recentStops = [...this.recentStops.slice(-255), { ...req, seq: this.stopSeq }];
    for (const f of this.inFlight.values()) if (this.matches(req, f.req)) stopping += 1;
    this.options.log('info', 'stop ranks', {
      jobId: req.jobId,
      attempt: req.attempt,
      reason: req.reason,
      stopping,
    });
    return { jobId: req.jobId, stopping };
  }

  private async startRank(req: StartRankRequest, cause: Causation): Promise<RankStartReply> {
    const key = keyOf(req);
    const stopSeqAtStart = this.stopSeq;
    const known = this.options.host.ranks().find((r) => keyOf(r) === key);
    if (known)
      return {
        outcome: 'started',
        jobId: req.jobId,
        attempt: req.attempt,
        rank: req.rank,
        created: false,
        startedAt: known.startedAt,
      };
    const context = this.options.host.context();
    const runtime = this.options.runtimes.find((r) => r.kind === req.runtime);
    const decision = checkStartRank(
      {
        ...context,
        ranks: this.options.host.ranks(),
        runtimes: new Set(this.options.runtimes.map((r) => r.kind)),
        overlays: this.options.netnsOf !== undefined,
      },
      req,
    );
    const refuse = (reasons: readonly RankRejection[]): RankStartReply => {
      this.options.log('info', 'rank start rejected', {
        jobId: req.jobId,
        attempt: req.attempt,
        rank: req.rank,
        reasons: reasons.map((r) => `${r.code}${r.field ? ` (${r.field})` : ''}`),
      });
      return rejected(req.jobId, req.rank, reasons);
    };
    if (decision.outcome === 'rejected') return refuse(decision.reasons);
    const unavailable = await runtime!.unavailable();
    if (unavailable !== null)
      return refuse([{ code: 'RUNTIME_UNAVAILABLE', message: unavailable.slice(0, 1024), field: 'runtime' }]);
    const netns = req.overlay === null ? null : (this.options.netnsOf?.(req.jobId, req.overlay) ?? null);
    if (req.overlay !== null && netns === null)
      return refuse([
        {
          code: 'RUNTIME_UNAVAILABLE',
          message: `job ${req.jobId} has no overlay on this edge (${req.overlay.interface})`,
          field: 'overlay',
        },
      ]);

    // The file system: the rank's workspace (kept across attempts: checkpoints) and its working dir.
    const workspace = join(this.workspaces(), req.jobId, `rank-${req.rank}`);
    await mkdir(join(this.workspaces(), req.jobId), { recursive: true, mode: 0o700 });
    await mkdir(workspace, { recursive: true, mode: 0o700 });
    try {
      await runtime!.prepareWorkspace?.(workspace);
    } catch (error) {
      if (error instanceof RankStartError)
        return refuse([{ code: error.code, message: error.message.slice(0, 1024), field: error.field }]);
      return refuse([{ code: 'START_FAILED', message: String(error).slice(0, 1024), field: 'workspace' }]);
    }
    if (this.options.jobFiles !== undefined && req.runtime === 'process')
      await linkJobFiles(this.options.jobFiles, workspace);
    const cwd = await resolveWorkingDir(workspace, req.workingDir);
    if (!cwd.ok)
      return refuse([
        { code: 'WORKING_DIR_INVALID', message: `workingDir ${cwd.message}`, field: 'workingDir' },
      ]);

    const launch: RankLaunch = {
      jobId: req.jobId,
      attempt: req.attempt,
      rank: req.rank,
      image: req.image,
      cmd: req.cmd,
      entrypoint: req.entrypoint,
      env: req.env,
      workspace,
      workingDir: cwd.path,
      gpuUuids: req.gpuUuids,
      gpuVendor: decision.gpuVendor,
      limits: req.limits,
      netns,
      labels: {
        [RANK_LABELS.edge]: this.options.edgeId,
        [RANK_LABELS.job]: req.jobId,
        [RANK_LABELS.attempt]: String(req.attempt),
        [RANK_LABELS.rank]: String(req.rank),
      },
    };
    let handle: RunningRank;
    try {
      handle = await runtime!.start(launch);
    } catch (error) {
      if (error instanceof RankStartError)
        return refuse([{ code: error.code, message: error.message.slice(0, 1024), field: error.field }]);
      return refuse([{ code: 'START_FAILED', message: String(error).slice(0, 1024), field: null }]);
    }
    const startedAt = this.options.clock.now().toISOString();
    const record: RankRecord = {
      jobId: req.jobId,
      attempt: req.attempt,
      rank: req.rank,
      localRank: req.localRank,
      worldSize: req.worldSize,
      reservationId: req.reservationId,
      runtime: req.runtime,
      runtimeId: handle.id,
      workspace,
      startedAt,
      maxDurationMs: req.maxDurationMs,
      state: 'running',
      correlationId: cause.correlationId,
      causationId: cause.causationId,
      exitedAt: null,
      exitCode: null,
      signal: null,
      stopReason: null,
      wallSeconds: 0,
      reported: false,
    };
    const live: Live = {
      record,
      handle,
      logs: { stdout: this.shipper(record, 'stdout'), stderr: this.shipper(record, 'stderr') },
      startedMono: performance.now(),
      stopReason: null,
      deadline: undefined,
      lastOutputMono: performance.now(),
      progress: undefined,
    };
    handle.onOutput((stream, line) => {
      live.lastOutputMono = performance.now();
      // The contract bounds a line; runtimes may cut longer (docker: 64 KiB).
      for (let i = 0; i === 0 || i < line.length; i += MAX_LINE_CHARS)
        live.logs[stream].push(line.slice(i, i + MAX_LINE_CHARS));
    });
    this.live.set(key, live);
    this.armDeadline(live, Date.parse(startedAt) + req.maxDurationMs);
    if (req.progressTimeoutMs !== null) this.watchProgress(live, req.progressTimeoutMs);
    const stoppedMeanwhile = this.recentStops.find((s) => s.seq > stopSeqAtStart && this.matches(s, req));
    if (stoppedMeanwhile || this.stopping) {
      live.stopReason = stoppedMeanwhile?.reason ?? 'shutdown';
      void handle.stop(stoppedMeanwhile?.graceMs ?? this.options.stopGraceMs ?? 10_000);
    }
    void handle.exited.then(
      (exit) => this.options.host.exclusive(() => this.onExit(key, exit)),
      (error: unknown) =>
        this.options.host.exclusive(() =>
          this.onExit(key, {
            exitCode: null,
            signal: null,
            reason: `runtime-error: ${String(error)}`.slice(0, 128),
          }),
        ),
    );
    await this.options.host.exclusive(() =>
      this.options.host.saveRanks([...this.options.host.ranks(), record]),
    );
    this.queueStatus(record);
    this.options.log('info', 'rank started', {
      jobId: req.jobId,
      attempt: req.attempt,
      rank: req.rank,
      runtime: req.runtime,
      id: handle.id,
    });
    return {
      outcome: 'started',
      jobId: req.jobId,
      attempt: req.attempt,
      rank: req.rank,
      created: true,
      startedAt,
    };
  }

  /** Stops the rank at its max duration, whatever execution says (timers re-armed past ~24.8 days). */
  private armDeadline(live: Live, deadlineMs: number): void {
    const delay = deadlineMs - this.options.clock.now().getTime();
    live.deadline = setTimeout(
      () => {
        if (deadlineMs > this.options.clock.now().getTime() && delay > MAX_TIMER_MS)
          return this.armDeadline(live, deadlineMs);
        live.stopReason ??= 'max-duration';
        this.options.log('info', 'rank reached its max duration; stopping it', { key: keyOf(live.record) });
        void live.handle.stop(this.options.stopGraceMs ?? 10_000);
      },
      Math.max(0, Math.min(delay, MAX_TIMER_MS)),
    );
  }

  /**
   * The progress timeout: a rank that printed nothing for `timeoutMs` is hung (stuck in a
   * collective, deadlocked) and is stopped with `stopReason: "no-progress"`.
   */
  private watchProgress(live: Live, timeoutMs: number): void {
    const check = (): void => {
      const silentMs = performance.now() - live.lastOutputMono;
      if (silentMs < timeoutMs) {
        live.progress = setTimeout(check, Math.min(timeoutMs - silentMs, MAX_TIMER_MS));
        return;
      }
      live.stopReason ??= 'no-progress';
      this.options.log('warn', 'rank printed nothing for its progress timeout; stopping it as hung', {
        key: keyOf(live.record),
        progressTimeoutMs: timeoutMs,
      });
      void live.handle.stop(this.options.stopGraceMs ?? 10_000);
    };
    live.progress = setTimeout(check, Math.min(timeoutMs, MAX_TIMER_MS));
  }

  private async onExit(key: string, exit: RankExit): Promise<void> {
    const live = this.live.get(key);
    if (!live) return;
    clearTimeout(live.deadline);
    clearTimeout(live.progress);
    live.logs.stdout.close();
    live.logs.stderr.close();
    const record: RankRecord = {
      ...live.record,
      state: 'exited',
      exitedAt: this.options.clock.now().toISOString(),
      exitCode: exit.exitCode,
      signal: exit.signal,
      stopReason: live.stopReason ?? (exit.reason !== null && exit.reason !== 'stopped' ? exit.reason : null),
      wallSeconds: (performance.now() - live.startedMono) / 1000,
    };
    await this.options.host.saveRanks(this.options.host.ranks().map((r) => (keyOf(r) === key ? record : r)));
    this.live.delete(key);
    this.queueStatus(record);
    this.options.log('info', 'rank exited', {
      key,
      exitCode: record.exitCode,
      signal: record.signal,
      stopReason: record.stopReason,
    });
  }

  private snapshotOf(live: Live): RankRecord {
    return { ...live.record, wallSeconds: (performance.now() - live.startedMono) / 1000 };
  }

  private queueStatus(record: RankRecord): void {
    const key = keyOf(record);
    const now = this.options.clock.now();
    this.statusSequence = Math.max(this.statusSequence + 1, now.getTime());
    const unsigned = {
      edgeId: this.options.edgeId,
      publicKey: this.options.edgeId,
      sequence: this.statusSequence,
      signedAt: now.toISOString(),
      jobId: record.jobId,
      attempt: record.attempt,
      rank: record.rank,
      state: record.state,
      startedAt: record.startedAt,
      exitedAt: record.exitedAt,
      exitCode: record.exitCode,
      signal: record.signal?.slice(0, 32) ?? null,
      stopReason: record.stopReason?.slice(0, 128) ?? null,
      wallSeconds: Math.max(0, record.wallSeconds),
      reportedAt: now.toISOString(),
    };
    const envelope = buildEnvelope(
      RankStatusReported,
      { ...unsigned, signature: this.options.sign(signingInput(RankStatusReported, unsigned)) },
      {
        streamId: streamIdOf('rank', record.jobId),
        occurredAt: now,
        ...causeOf(record),
      },
    );
    this.outbox.push({
      subject: RankStatusReported.subject({ edgeId: this.options.edgeId }, this.options.prefix),
      envelope,
      // A newer status replaces a queued `running` one; an exited one is never replaced.
      supersedeKey: record.state === 'running' ? key : null,
      ...(record.state === 'exited'
        ? {
            onAck: () =>
              void this.options.host
                .exclusive(() =>
                  this.options.host.saveRanks(
                    this.options.host.ranks().map((r) => (keyOf(r) === key ? { ...r, reported: true } : r)),
                  ),
                )
                .catch((error: unknown) =>
                  this.options.log('warn', 'could not record a delivered status', { error: String(error) }),
                ),
          }
        : {}),
    });
  }

  private shipper(record: RankRecord, stream: 'stdout' | 'stderr'): LogShipper {
    const subject = RankLogChunk.subject(
      { edgeId: this.options.edgeId, jobId: record.jobId },
      this.options.prefix,
    );
    return new LogShipper((chunk) => {
      if (!this.options.host.connected() || this.options.nc.isClosed()) return false;
      try {
        const envelope = buildEnvelope(
          RankLogChunk,
          {
            jobId: record.jobId,
            attempt: record.attempt,
            rank: record.rank,
            stream,
            seq: chunk.seq,
            lines: chunk.lines,
            dropped: chunk.dropped,
            at: this.options.clock.now().toISOString(),
          },
          {
            streamId: streamIdOf('rank', record.jobId),
            occurredAt: this.options.clock.now(),
            ...causeOf(record),
          },
        );
        this.options.nc.publish(subject, JSON.stringify(envelope));
        return true;
      } catch (error) {
        this.options.log('warn', 'log chunk not sent', { error: String(error) });
        return false;
      }
    }, this.options.logBatching);
  }
}

/**
 * What a rank's statuses and logs are stamped with: the start command's chain, caused by it (a
 * record kept from before these were stored starts a chain of its own, as statuses did then).
 */
const causeOf = (record: RankRecord): Partial<Causation> =>
  record.correlationId && record.causationId
    ? { correlationId: record.correlationId, causationId: record.causationId }
    : {};

/**
 * Asks every runtime to remove what an earlier run of this edge left (a crash): called at edge start,
 * before the edge even connects to NATS, so no orphan runs while it waits for the network.
 */
export const reapOrphans = async (
  runtimes: readonly RankRuntime[],
  edgeId: string,
  log: EdgeLogger,
): Promise<void> => {
  for (const runtime of runtimes) {
    try {
      const reaped = await runtime.reapOrphans(edgeId);
      if (reaped > 0) log('warn', 'reaped orphaned ranks', { runtime: runtime.kind, reaped });
    } catch (error) {
      log('error', 'could not reap orphaned ranks', { runtime: runtime.kind, error: String(error) });
    }
  }
};

const rejected = (jobId: string, rank: number | null, reasons: readonly RankRejection[]): RankStartReply => ({
  outcome: 'rejected',
  jobId,
  rank,
  reasons: reasons.length > 0 ? [...reasons] : [{ code: 'START_FAILED', message: 'rejected', field: null }],
});
