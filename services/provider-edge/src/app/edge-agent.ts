import {
  type BenchmarkProfile,
  buildEnvelope,
  canonicalJson,
  type Clock,
  streamIdOf,
  createRegistry,
  EdgeBenchmarkReported,
  EdgeDeregistered,
  EdgeHeartbeat,
  type EdgeIsolation,
  EdgeLinksProbed,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeRegistered,
  EdgeReservationsReported,
  type Envelope,
  type Host,
  hostIdentity,
  type Inventory,
  type MessageDefinition,
  type PayloadOf,
  type PolicySummary,
  ReleaseOnEdge,
  type ReleaseReply,
  type ReservationReply,
  ReserveOnEdge,
  signingInput,
  systemClock,
  type ValidationIssue,
} from '@gpunet/contracts';
import {
  type BenchmarkRequest,
  type ChallengeWorker,
  EdgeBenchmarkAgent,
  EdgeChallengeAgent,
  type ProbeResponder,
  type Reporter,
  runTorchBenchmark,
  simulatedProfile,
  startProbeResponder,
} from '@gpunet/edge-bench';
import { type EdgeAttachSettings, EdgeOverlayAgent, type NetnsRef } from '@gpunet/overlay';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { backoffMs } from '../domain/backoff';
import { type Policy, parsePolicy } from '../domain/policy/policy';
import { activeReservations, checkReservation, type EdgeSnapshot } from '../domain/policy/reservation.check';
import { resolveSharedGpus, summarizePolicy } from '../domain/policy/shared-gpus';
import { reservationsInUseUntil } from '../domain/ranks/in-use';
import type { Detection } from '../infra/detect/detector';
import type { EdgeIdentity } from '../infra/identity.store';
import { type EdgeLogger, silentLogger } from '../infra/logger';
import { connectEdge, type EdgeLink } from '../infra/nats.link';
import { isolationOfRuntimes } from '../infra/runtime/isolation';
import { ProcessRuntime } from '../infra/runtime/process.runtime';
import type { EdgeState, StateStore } from '../infra/state.store';
import type { LogBatching } from './log-shipper';
import { RankAgent, type RankAgentOptions, reapOrphans } from './rank-agent';
import type { RankRuntime } from './rank-runtime.port';

export const AGENT_VERSION = '0.1.0';

/** The policy file does not validate, or names GPUs this host does not have: the edge does not start. */
export class PolicyRejectedError extends Error {
  override readonly name = 'PolicyRejectedError';
  readonly code = 'POLICY_REJECTED' as const;
  constructor(readonly issues: readonly ValidationIssue[]) {
    super(
      `the provider policy is invalid:\n${issues.map((i) => `  ${i.path || '(root)'}: ${i.message}`).join('\n')}`,
    );
  }
}

/** The probe responder could not listen (a port in use, no permission): the edge does not start. */
export class ProbeResponderError extends Error {
  override readonly name = 'ProbeResponderError';
  readonly code = 'PROBE_RESPONDER_FAILED' as const;
}

export interface EdgeAgentOptions {
  readonly identity: EdgeIdentity;
  readonly store: StateStore;
  /** Reads the policy file (again on `reloadPolicy`). */
  readonly readPolicy: () => Promise<string>;
  /** Detects GPUs and host (again on every rescan). */
  readonly detect: () => Promise<Detection>;
  readonly nats: { readonly servers: string | string[]; readonly prefix?: string };
  readonly clock?: Clock;
  /** Heartbeat period in ms; 0 = only when `heartbeat()` is called (tests). Default 5 000. */
  readonly heartbeatIntervalMs?: number;
  /** Hardware rescan period in ms; 0 = only on `rescan()`. Default 60 000. */
  readonly rescanIntervalMs?: number;
  /** How long one JetStream publish may take before it is retried, in ms. Default 5 000. */
  readonly publishTimeoutMs?: number;
  readonly log?: EdgeLogger;
  readonly random?: () => number;
  /** The benchmark agent: answers `cmd.edge.{edgeId}.benchmark.v1` / `…probe-links.v1`. Default enabled. */
  readonly benchmarks?: EdgeBenchmarkOptions;
  /**
   * The challenge agent: answers `cmd.edge.{edgeId}.challenge.v1` / `…challenge-open.v1` (ADR 0070).
   * Default enabled: a real inventory computes on its GPUs (torch; the CPU where torch sees none), a
   * simulated one declines `SIMULATED`.
   */
  readonly challenges?: EdgeChallengeOptions;
  /** The rank agent: answers `cmd.edge.{edgeId}.start-rank.v1` / `…stop-ranks.v1`. Default enabled. */
  readonly ranks?: EdgeRankOptions;
  /**
   * The job overlay agent: answers `cmd.edge.{edgeId}.attach-overlay.v1` / `…connect-overlay-peers.v1`
   * / `…detach-overlay.v1` and runs a job's ranks in the job's rank namespace. Default disabled (it
   * needs root and WireGuard); `provider-edge start --overlay` decides.
   */
  readonly overlay?: EdgeOverlayOptions;
  /**
   * Finds the isolation ranks run with (ADR 0072), called with the policy the rank runtimes were
   * made with: at start and at every rescan (the engine may have been reconfigured). It goes into
   * every signed host report as `host.isolation`, and reservations whose `minimumIsolation` is
   * stronger are declined `ISOLATION_TOO_WEAK`. Default: from the runtimes' kinds — host processes
   * when the process runtime is among them, the engine's `docker info` for the docker runtime, the
   * weakest level when ranks are off.
   */
  readonly isolation?: (policy: Policy) => Promise<EdgeIsolation>;
}

export interface EdgeOverlayOptions {
  readonly enabled: boolean;
  /** Start of the rank namespaces' names (default `gpunet`); several edges on one machine need distinct ones. */
  readonly netnsPrefix?: string;
  /** Host-level attach settings (backend, STUN timeout, …). */
  readonly attach?: EdgeAttachSettings;
  /** Probe window of every connect, ms. Default the library's. */
  readonly probeWindowMs?: number;
}

/** What a runtime factory knows when the edge starts. */
export interface RankRuntimeContext {
  readonly edgeId: string;
  readonly policy: Policy;
  readonly host: Host;
  readonly inventory: Inventory;
  readonly dataDir: string;
  readonly log: EdgeLogger;
}

export interface EdgeRankOptions {
  /** Default true. */
  readonly enabled?: boolean;
  /**
   * The runtimes ranks may ask for, or how to make them once the policy and the hardware are known.
   * Default: the process runtime (development and CI), with its pid records under `dataDir/ranks`.
   */
  readonly runtimes?:
    readonly RankRuntime[] | ((context: RankRuntimeContext) => Promise<readonly RankRuntime[]>);
  /** Workspaces and the process runtime's records live here. Default: the state file's directory. */
  readonly dataDir?: string;
  readonly logBatching?: LogBatching;
  /** SIGTERM→SIGKILL grace when the edge stops ranks itself (max duration, shutdown). Default 10 s. */
  readonly stopGraceMs?: number;
  /** The network namespace of a job's overlay; absent: starts naming an overlay are refused. */
  readonly netnsOf?: RankAgentOptions['netnsOf'];
  /** Job code for process ranks (development and CI providers); see `RankAgentOptions.jobFiles`. */
  readonly jobFiles?: string;
}

export interface EdgeBenchmarkOptions {
  /** Default true. */
  readonly enabled?: boolean;
  /** Benchmarks and probes may run while a reservation holds the host (when the request allows it too). Default false. */
  readonly policyAllowsWhileBusy?: boolean;
  /** Measures the host; default: `simulatedProfile` on a simulated edge, else `runTorchBenchmark`. */
  readonly benchmark?: (request: BenchmarkRequest) => Promise<BenchmarkProfile>;
  /** Python interpreter for `runTorchBenchmark` (default `/usr/bin/python3`). */
  readonly python?: string;
  /**
   * Answer peers' link probes (`startProbeResponder`): UDP echoes and bounded TCP transfers on these
   * ports, on every address (benchmarking probes each reported address at its configured
   * `PROBE_UDP_PORT`/`PROBE_TCP_PORT`). Absent: no responder, and peers' probes to this host fail. Port
   * 0 picks a free one (tests; `probePorts` says which).
   */
  readonly probeResponder?: { readonly udpPort: number; readonly tcpPort: number; readonly address?: string };
}

export interface EdgeChallengeOptions {
  /** Default true. */
  readonly enabled?: boolean;
  /** Python interpreter with torch for the challenge worker (default `/usr/bin/python3`). */
  readonly python?: string;
  /** CPU threads of the worker's torch. Default torch's. */
  readonly threads?: number;
  /** Start the worker and initialise the GPUs when the edge starts. Default true on a real inventory. */
  readonly warm?: boolean;
  /** Computes the challenges (tests). Default: the Python worker. */
  readonly worker?: ChallengeWorker;
}

type SignedDef =
  | typeof EdgeRegistered
  | typeof EdgeInventoryReported
  | typeof EdgePolicyReported
  | typeof EdgeReservationsReported
  | typeof EdgeDeregistered
  | typeof EdgeBenchmarkReported
  | typeof EdgeLinksProbed;

/** Reports that answer one request each: never superseded in the queue by a later one of the kind. */
const PER_REQUEST_REPORTS: ReadonlySet<string> = new Set([
  EdgeRegistered.type,
  EdgeBenchmarkReported.type,
  EdgeLinksProbed.type,
]);

type Unsigned<D extends SignedDef> = Omit<
  PayloadOf<D>,
  'edgeId' | 'publicKey' | 'sequence' | 'signedAt' | 'signature'
>;

interface Pending {
  readonly type: string;
  readonly subject: string;
  readonly envelope: Envelope;
}

const commandRegistry = createRegistry([ReserveOnEdge, ReleaseOnEdge]);

export const digestOf = (value: unknown): string =>
  createHash('sha256').update(canonicalJson(value)).digest('hex');

/** What an inventory report is about: the GPUs and the host's lasting facts (not its free disk). */
const inventoryDigest = (d: Pick<Detection, 'inventory' | 'host'>): string =>
  digestOf({ inventory: d.inventory, host: hostIdentity(d.host) });

/** How a rank launch names the job's namespace (`RankLaunch.netns`): by name, or `pid:<n>`. */
const rankNetnsOf = (ref: NetnsRef | null): string | null =>
  ref === null ? null : 'name' in ref ? ref.name : `pid:${ref.pid}`;

/**
 * The provider edge: detects its hardware, validates its policy, registers (signed) with the control
 * plane, reports changes, heartbeats, and answers reservation commands after re-checking its policy.
 * Reports wait in a queue and are re-sent with backoff until JetStream acknowledges them, so a NATS
 * outage delays them but loses none; the sequence numbers and reservations survive restarts in the
 * state file.
 */
export class EdgeAgent {
  private readonly clock: Clock;
  private readonly log: EdgeLogger;
  private readonly prefix: string;
  private link: EdgeLink | undefined;
  private benchmarkAgent: EdgeBenchmarkAgent | undefined;
  private challengeAgent: EdgeChallengeAgent | undefined;
  private probeResponder: ProbeResponder | undefined;
  private rankAgent: RankAgent | undefined;
  private overlayAgent: EdgeOverlayAgent | undefined;
  private connected = true;
  private subscriptions: Subscription[] = [];
  private timers: NodeJS.Timeout[] = [];
  private state!: EdgeState;
  private policy!: Policy;
  /** The policy the rank runtimes were made with (a reload does not remake them). */
  private runtimePolicy!: Policy;
  private runtimeKinds: readonly RankRuntime['kind'][] = [];
  private isolation!: EdgeIsolation;
  private detection!: Detection;
  private sharedUuids: readonly string[] = [];
  private summary!: PolicySummary;
  private heartbeatSequence = 0;
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private serial: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** Set once stop() gave up on the queue: no more retries. */
  private closed = false;

  constructor(private readonly options: EdgeAgentOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLogger;
    this.prefix = options.nats.prefix ?? '';
  }

  get edgeId(): string {
    return this.options.identity.edgeId;
  }

  get inventory(): Inventory {
    return this.detection.inventory;
  }

  /** The detected host with the isolation ranks run with: what every signed report carries. */
  get host(): Host {
    return { ...this.detection.host, isolation: this.isolation };
  }

  get policySummary(): PolicySummary {
    return this.summary;
  }

  /** Reports not yet acknowledged by JetStream. */
  get pendingReports(): number {
    return this.pending.length;
  }

  get reservations(): EdgeState['reservations'] {
    return this.state.reservations;
  }

  /** The ranks this edge started (running and exited), as the state file has them. */
  get ranks(): EdgeState['ranks'] {
    return this.state.ranks;
  }

  /** Where the probe responder listens; undefined when it does not run. */
  get probePorts(): { readonly udpPort: number; readonly tcpPort: number } | undefined {
    return this.probeResponder
      ? { udpPort: this.probeResponder.udpPort, tcpPort: this.probeResponder.tcpPort }
      : undefined;
  }

  /** Rank statuses not yet acknowledged by JetStream. */
  get pendingRankStatuses(): number {
    return this.rankAgent?.pendingStatuses ?? 0;
  }

  /** Validates the policy against the detected hardware, connects, registers and starts the timers. */
  async start(): Promise<void> {
    this.detection = await this.options.detect();
    const parsed = parsePolicy(await this.options.readPolicy());
    if (!parsed.ok) throw new PolicyRejectedError(parsed.issues);
    const shared = resolveSharedGpus(parsed.policy, this.detection.inventory);
    if (shared.errors.length > 0) throw new PolicyRejectedError(shared.errors);
    for (const w of shared.warnings) this.log('warn', w.message, { path: w.path });
    this.policy = parsed.policy;
    this.sharedUuids = shared.uuids;
    this.summary = summarizePolicy(this.policy, this.sharedUuids, this.detection.host);
    this.state = await this.options.store.load(this.edgeId);
    this.state = { ...this.state, reservations: this.active() };
    // What a crashed earlier run left running is killed before anything else, NATS or not.
    const rankRuntimes = await this.makeRankRuntimes();
    this.runtimePolicy = this.policy;
    this.runtimeKinds = rankRuntimes.map((r) => r.kind);
    this.isolation = await this.checkIsolation();
    this.state = { ...this.state, isolation: this.isolation };
    this.log(
      this.isolation.level === 'host-process' ? 'warn' : 'info',
      `isolation: ${this.isolation.level}`,
      {
        ...this.isolation,
      },
    );
    await reapOrphans(rankRuntimes, this.edgeId, this.log);
    // Before registering: a port another program holds fails the start instead of leaving peers'
    // probes to this host failing unexplained.
    await this.startProbeResponder();

    this.link = await connectEdge({
      servers: this.options.nats.servers,
      identity: this.options.identity,
      name: `edge-${this.policy.name}`,
      ...(this.options.random ? { random: this.options.random } : {}),
      onStatus: (s) => {
        if (s.type === 'reconnect') {
          this.log('info', 'reconnected to NATS');
          this.connected = true;
          // Retry queued reports now, with a fresh backoff: the outage that grew it is over.
          this.failures = 0;
          clearTimeout(this.retryTimer);
          this.kick();
          this.rankAgent?.reconnected();
        } else if (s.type === 'disconnect') {
          this.connected = false;
          this.log('warn', 'disconnected from NATS');
        } else if (s.type === 'error') this.log('error', 'NATS error', { error: String(s.error ?? s.data) });
      },
    });
    this.subscriptions = [
      this.link.nc.subscribe(ReserveOnEdge.subject({ edgeId: this.edgeId }, this.prefix), {
        callback: (error, msg) =>
          error ? this.log('error', 'reserve subscription', { error: String(error) }) : this.onCommand(msg),
      }),
      this.link.nc.subscribe(ReleaseOnEdge.subject({ edgeId: this.edgeId }, this.prefix), {
        callback: (error, msg) =>
          error ? this.log('error', 'release subscription', { error: String(error) }) : this.onCommand(msg),
      }),
    ];
    this.startBenchmarkAgent(this.link);
    this.startChallengeAgent(this.link);
    // Before the rank agent: a rank start naming the job's overlay finds its namespace here.
    await this.startOverlayAgent(this.link, rankRuntimes);
    await this.startRankAgent(this.link, rankRuntimes);
    await this.link.nc.flush();
    await this.register();
    const heartbeat = this.options.heartbeatIntervalMs ?? 5_000;
    if (heartbeat > 0) this.timers.push(setInterval(() => this.heartbeat(), heartbeat));
    const rescan = this.options.rescanIntervalMs ?? 60_000;
    if (rescan > 0)
      this.timers.push(
        setInterval(
          () =>
            void this.rescan().catch((e: unknown) =>
              this.log('error', 'rescan failed', { error: String(e) }),
            ),
          rescan,
        ),
      );
    this.log('info', 'edge started', {
      edgeId: this.edgeId,
      simulated: this.inventory.simulated,
      gpus: this.inventory.gpus.length,
      shared: this.sharedUuids.length,
    });
  }

  /** Stops timers and subscriptions, tries to deliver what is queued, closes the connection. */
  async stop(options: { flushTimeoutMs?: number } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.retryTimer);
    for (const s of this.subscriptions) s.unsubscribe();
    // Stops answering; running benchmarks and probes queue their reports before the flush below.
    await this.benchmarkAgent?.stop();
    await this.challengeAgent?.stop();
    await this.probeResponder?.close();
    // A graceful stop ends the ranks (reason `shutdown`) and queues their exits before the flush.
    await this.rankAgent?.stop();
    // With the ranks gone: every job's interface, relay connection and rank namespace is removed.
    await this.overlayAgent
      ?.stop()
      .catch((error: unknown) => this.log('error', 'overlay agent stop failed', { error: String(error) }));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.flushed(), this.rankAgent?.drained()]),
      new Promise((r) => (timer = setTimeout(r, options.flushTimeoutMs ?? 2_000))),
    ]);
    clearTimeout(timer);
    // Whatever is still queued is given up: the next start registers afresh (and re-sends the
    // rank exits the state file has as not acknowledged).
    this.closed = true;
    this.rankAgent?.close();
    clearTimeout(this.retryTimer);
    await this.serial;
    await this.link?.close();
  }

  /** Publishes one heartbeat (core NATS; buffered by the client while disconnected). */
  heartbeat(): void {
    if (!this.link || this.stopped) return;
    this.heartbeatSequence += 1;
    const envelope = buildEnvelope(
      EdgeHeartbeat,
      {
        edgeId: this.edgeId,
        sequence: this.heartbeatSequence,
        sentAt: this.clock.now().toISOString(),
        inventoryDigest: digestOf(this.inventory),
      },
      { streamId: streamIdOf('edge', this.edgeId), occurredAt: this.clock.now() },
    );
    this.link.nc.publish(
      EdgeHeartbeat.subject({ edgeId: this.edgeId }, this.prefix),
      JSON.stringify(envelope),
    );
    this.rankAgent?.heartbeat();
    void this.exclusive(() => this.pruneExpired());
  }

  /**
   * Detects the hardware and the isolation again; reports the inventory (and the shared GPUs) if
   * they changed. An isolation check that fails keeps the last one.
   */
  async rescan(): Promise<boolean> {
    const detection = await this.options.detect();
    const isolation = await this.checkIsolation().catch((error: unknown) => {
      this.log('warn', 'isolation check failed; keeping the last one', { error: String(error) });
      return this.isolation;
    });
    return this.exclusive(async () => {
      const before = inventoryDigest({ inventory: this.inventory, host: this.host });
      this.detection = detection;
      if (digestOf(isolation) !== digestOf(this.isolation)) {
        this.log(
          isolation.level === 'host-process' ? 'warn' : 'info',
          `isolation changed: ${isolation.level}`,
          {
            ...isolation,
            was: this.isolation.level,
          },
        );
        this.isolation = isolation;
        this.state = { ...this.state, isolation };
      }
      if (inventoryDigest({ inventory: this.inventory, host: this.host }) === before) return false;
      this.log('info', 'inventory changed', { gpus: detection.inventory.gpus.length });
      const shared = resolveSharedGpus(this.policy, detection.inventory);
      // A GPU the policy names may have vanished (a fault): share what is left and say so.
      for (const e of shared.errors)
        this.log('warn', `policy names a GPU that is gone: ${e.message}`, { path: e.path });
      await this.report(EdgeInventoryReported, { host: this.host, inventory: detection.inventory });
      await this.updateSummary(shared.uuids);
      return true;
    });
  }

  /** Reads the policy file again; an invalid one is refused and the current policy stays. */
  async reloadPolicy(): Promise<
    { ok: true; changed: boolean } | { ok: false; issues: readonly ValidationIssue[] }
  > {
    const parsed = parsePolicy(await this.options.readPolicy());
    if (!parsed.ok) {
      this.log('error', 'policy reload refused; keeping the current policy', { issues: parsed.issues });
      return { ok: false, issues: parsed.issues };
    }
    const shared = resolveSharedGpus(parsed.policy, this.inventory);
    if (shared.errors.length > 0) return { ok: false, issues: shared.errors };
    return this.exclusive(async () => {
      this.policy = parsed.policy;
      return { ok: true as const, changed: await this.updateSummary(shared.uuids) };
    });
  }

  /** Tells the control plane the edge leaves the network (the provider's decision). */
  async deregister(reason: string): Promise<void> {
    await this.exclusive(() => this.report(EdgeDeregistered, { reason: reason.slice(0, 256) }));
    await this.flushed();
  }

  /** Resolves once every queued report was acknowledged. */
  async flushed(): Promise<void> {
    // Retries follow their own backoff (and reconnects); this only watches the queue drain.
    while (this.pending.length > 0 && !this.closed) await new Promise((r) => setTimeout(r, 10));
  }

  /** The snapshot the reservation check sees (for `edge status` and tests). */
  snapshot(): EdgeSnapshot {
    return {
      policy: this.policy,
      inventory: this.inventory,
      host: this.host,
      sharedUuids: this.sharedUuids,
      reservations: this.state.reservations,
      inUseUntil: reservationsInUseUntil(this.state.ranks),
    };
  }

  // ---------------------------------------------------------------------------------------------

  private nowMs(): number {
    return this.clock.now().getTime();
  }

  /** Reservations holding now: before their hold's end, or in use by ranks. */
  private active(): EdgeState['reservations'] {
    return activeReservations(
      this.state.reservations,
      this.nowMs(),
      reservationsInUseUntil(this.state.ranks),
    );
  }

  /** Runs state changes one at a time (reservations, reports, rescans). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.serial.then(fn, fn);
    this.serial = run.catch(() => undefined);
    return run;
  }

  private async register(): Promise<void> {
    await this.exclusive(async () => {
      await this.report(EdgeRegistered, {
        name: this.policy.name,
        agentVersion: AGENT_VERSION,
        host: this.host,
        inventory: this.inventory,
        policy: this.summary,
      });
      this.state = {
        ...this.state,
        registeredAt: this.state.registeredAt ?? this.clock.now().toISOString(),
        lastInventoryDigest: digestOf(this.inventory),
        lastPolicyDigest: digestOf(this.summary),
      };
      await this.options.store.save(this.state);
      if (this.state.reservations.length > 0)
        await this.report(EdgeReservationsReported, { reservations: this.state.reservations });
    });
  }

  private async updateSummary(shared: readonly string[]): Promise<boolean> {
    this.sharedUuids = shared;
    const summary = summarizePolicy(this.policy, shared, this.host);
    if (digestOf(summary) === digestOf(this.summary)) return false;
    this.summary = summary;
    await this.report(EdgePolicyReported, { policy: summary });
    this.state = {
      ...this.state,
      lastPolicyDigest: digestOf(summary),
      lastInventoryDigest: digestOf(this.inventory),
    };
    await this.options.store.save(this.state);
    return true;
  }

  /** Signs a report with the next sequence number (persisted first, never reused) and queues it. */
  private async report<D extends SignedDef>(def: D, fields: Unsigned<D>): Promise<void> {
    // Never below the clock in ms: even an edge whose state file was lost keeps its reports newer
    // than the ones it sent before, so the control plane does not drop them as stale.
    const sequence = Math.max(this.state.sequence + 1, this.nowMs());
    this.state = { ...this.state, sequence };
    await this.options.store.save(this.state);
    const now = this.clock.now();
    const unsigned = {
      edgeId: this.edgeId,
      publicKey: this.edgeId,
      sequence,
      signedAt: now.toISOString(),
      ...fields,
    } as Record<string, unknown>;
    const signature = this.options.identity.sign(signingInput(def, unsigned));
    const envelope = buildEnvelope(
      def as MessageDefinition,
      { ...unsigned, signature },
      {
        streamId: streamIdOf('edge', this.edgeId),
        occurredAt: now,
      },
    );
    // A newer report of the same kind supersedes a queued one (registrations, benchmark and probe
    // results always go out: each answers its own request).
    if (!PER_REQUEST_REPORTS.has(def.type)) this.pending = this.pending.filter((p) => p.type !== def.type);
    this.pending.push({
      type: def.type,
      subject: def.subject({ edgeId: this.edgeId }, this.prefix),
      envelope,
    });
    this.kick();
  }

  /** The overlay agent, when mounted (tests, metrics). */
  get overlays(): EdgeOverlayAgent | undefined {
    return this.overlayAgent;
  }

  /**
   * Mounts the job overlay agent on the edge's connection, when enabled. A runtime that makes
   * its jobs' namespaces itself (docker's job sandbox) supplies them; else the agent names its own.
   */
  private async startOverlayAgent(link: EdgeLink, runtimes: readonly RankRuntime[]): Promise<void> {
    const options = this.options.overlay;
    if (!options?.enabled) return;
    const jobNetworks = runtimes.find((r) => r.jobNetworks !== undefined)?.jobNetworks;
    this.overlayAgent = new EdgeOverlayAgent({
      nc: link.nc,
      edgeId: this.edgeId,
      prefix: this.prefix,
      ...(options.netnsPrefix === undefined ? {} : { netnsPrefix: options.netnsPrefix }),
      ...(jobNetworks === undefined ? {} : { rankNamespaces: jobNetworks }),
      ...(options.attach ? { attach: options.attach } : {}),
      ...(options.probeWindowMs === undefined ? {} : { connect: { windowMs: options.probeWindowMs } }),
      log: (level, message, fields) => this.log(level, message, fields),
    });
    await this.overlayAgent.start();
  }

  private async startProbeResponder(): Promise<void> {
    const options = this.options.benchmarks ?? {};
    if (options.enabled === false || options.probeResponder === undefined) return;
    const { udpPort, tcpPort, address } = options.probeResponder;
    try {
      this.probeResponder = await startProbeResponder({
        udpPort,
        tcpPort,
        ...(address === undefined ? {} : { address }),
      });
    } catch (error) {
      throw new ProbeResponderError(
        `cannot answer link probes on ${address ?? '0.0.0.0'} udp ${udpPort} / tcp ${tcpPort}: ${String(error)}`,
        { cause: error },
      );
    }
    this.log('info', 'answering link probes', this.probePorts);
  }

  /** Mounts the benchmark agent on the edge's connection; its reports go through `report()`. */
  private startBenchmarkAgent(link: EdgeLink): void {
    const options = this.options.benchmarks ?? {};
    if (options.enabled === false) return;
    // Signed with the edge's key and persisted sequence, queued and retried like every edge report.
    const report: Reporter = (def, fields) => this.exclusive(() => this.report(def, fields));
    this.benchmarkAgent = new EdgeBenchmarkAgent({
      edgeId: this.edgeId,
      nc: link.nc,
      prefix: this.prefix,
      benchmark: options.benchmark ?? ((request) => this.measure(request, options.python)),
      isBusy: () => this.active().length > 0,
      ...(options.policyAllowsWhileBusy === undefined
        ? {}
        : { policyAllowsWhileBusy: options.policyAllowsWhileBusy }),
      report,
      clock: this.clock,
      onError: (error, context) => this.log('error', `${context} failed`, { error: String(error) }),
    });
    this.benchmarkAgent.start();
  }

  /**
   * Mounts the challenge agent: GPUs named by the inventory's uuids, computed on by vendor index. A
   * simulated edge never starts a worker and declines every challenge.
   */
  private startChallengeAgent(link: EdgeLink): void {
    const options = this.options.challenges ?? {};
    if (options.enabled === false) return;
    const simulated = this.inventory.simulated;
    this.challengeAgent = new EdgeChallengeAgent({
      edgeId: this.edgeId,
      nc: link.nc,
      prefix: this.prefix,
      gpus: () => this.inventory.gpus.map((g) => ({ uuid: g.uuid, index: g.index })),
      simulated: () => this.inventory.simulated,
      ...(options.worker === undefined ? {} : { worker: options.worker }),
      workerOptions: {
        ...(options.python === undefined ? {} : { python: options.python }),
        ...(options.threads === undefined ? {} : { threads: options.threads }),
      },
      warm: options.warm ?? !simulated,
      onEvent: (event) =>
        this.log(event.type === 'gave-up' ? 'warn' : 'info', `challenge ${event.type}`, { ...event }),
      onError: (error, context) => this.log('error', `${context} failed`, { error: String(error) }),
    });
    this.challengeAgent.start();
  }

  /** A simulated edge reports its declared figures (labelled simulated); a real one runs torch. */
  private measure(request: BenchmarkRequest, python: string | undefined): Promise<BenchmarkProfile> {
    const inventory = this.inventory;
    if (inventory.simulated)
      return Promise.resolve(
        simulatedProfile({
          gpus: inventory.gpus,
          links: inventory.links,
          rng: this.options.random ?? Math.random,
          nowMs: this.nowMs(),
          ttlMs: request.ttlMs,
          profileId: request.requestId,
        }),
      );
    return runTorchBenchmark({
      ...(python === undefined ? {} : { python }),
      // An edge that reports GPUs is measured on them: where torch sees none (a broken driver, or
      // GPUs claimed and not there) the run fails DEVICE_ABSENT instead of measuring the CPU.
      device: inventory.gpus.length > 0 ? 'cuda' : 'auto',
      suites: request.suites,
      maxDurationMs: request.maxDurationMs,
      ttlMs: request.ttlMs,
      profileId: request.requestId,
      gpuUuids: Object.fromEntries(
        inventory.gpus.filter((g) => g.vendor === 'nvidia').map((g) => [g.index, g.uuid]),
      ),
    });
  }

  private kick(): void {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.flushAgain) {
        this.flushAgain = false;
        this.kick();
      }
    });
  }

  private async flush(): Promise<void> {
    const link = this.link;
    if (!link) return;
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      try {
        await link.js.publish(next.subject, JSON.stringify(next.envelope), {
          msgID: next.envelope.eventId,
          timeout: this.options.publishTimeoutMs ?? 5_000,
        });
        if (this.pending[0] === next) this.pending.shift();
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        const delay = backoffMs(this.failures, (this.options.random ?? Math.random)());
        this.log('warn', 'report not acknowledged; retrying', {
          type: next.type,
          delayMs: delay,
          error: String(error),
        });
        clearTimeout(this.retryTimer);
        if (!this.closed) this.retryTimer = setTimeout(() => this.kick(), delay);
        return;
      }
    }
  }

  private async pruneExpired(): Promise<void> {
    const active = this.active();
    if (active.length !== this.state.reservations.length) {
      this.state = { ...this.state, reservations: active };
      await this.options.store.save(this.state);
      await this.report(EdgeReservationsReported, { reservations: active });
    }
    await this.rankAgent?.prune(
      new Set(active.map((r) => r.reservationId)),
      new Set(active.map((r) => r.jobId)),
    );
  }

  /** The rank runtimes, made once the policy and the hardware are known; none when ranks are off. */
  private async makeRankRuntimes(): Promise<readonly RankRuntime[]> {
    const options = this.options.ranks ?? {};
    if (options.enabled === false) return [];
    const dataDir = this.rankDataDir();
    const runtimes =
      typeof options.runtimes === 'function'
        ? await options.runtimes({
            edgeId: this.edgeId,
            policy: this.policy,
            host: this.host,
            inventory: this.inventory,
            dataDir,
            log: this.log,
          })
        : (options.runtimes ?? [new ProcessRuntime({ stateDir: join(dataDir, 'ranks'), log: this.log })]);
    if (runtimes.some((r) => r.kind === 'process') && !this.inventory.simulated)
      this.log(
        'warn',
        'the process runtime is enabled: ranks run as host processes of the edge user (development only)',
      );
    // A host process writes wherever the edge's user can: a quota on its workspace would bound nothing.
    if (runtimes.some((r) => r.kind === 'process') && this.policy.workspaceBytesPerRank !== null)
      this.log('warn', 'the process runtime does not enforce disk.workspace_per_rank', {
        workspacePerRankBytes: this.policy.workspaceBytesPerRank,
      });
    return runtimes;
  }

  /** The isolation ranks run with now (`EdgeAgentOptions.isolation`). */
  private checkIsolation(): Promise<EdgeIsolation> {
    return this.options.isolation
      ? this.options.isolation(this.runtimePolicy)
      : isolationOfRuntimes(this.runtimeKinds);
  }

  private rankDataDir(): string {
    return this.options.ranks?.dataDir ?? dirname(this.options.store.path);
  }

  /** Mounts the rank agent on the edge's connection; it shares the state file and `exclusive`. */
  private async startRankAgent(link: EdgeLink, runtimes: readonly RankRuntime[]): Promise<void> {
    const options = this.options.ranks ?? {};
    if (options.enabled === false) return;
    const dataDir = this.rankDataDir();
    this.rankAgent = new RankAgent({
      edgeId: this.edgeId,
      nc: link.nc,
      js: link.js,
      prefix: this.prefix,
      runtimes,
      dataDir,
      clock: this.clock,
      log: this.log,
      random: this.options.random ?? Math.random,
      publishTimeoutMs: this.options.publishTimeoutMs ?? 5_000,
      sign: (text) => this.options.identity.sign(text),
      ...(options.logBatching ? { logBatching: options.logBatching } : {}),
      ...(options.stopGraceMs === undefined ? {} : { stopGraceMs: options.stopGraceMs }),
      ...(options.netnsOf
        ? { netnsOf: options.netnsOf }
        : this.overlayAgent
          ? { netnsOf: (jobId: string) => rankNetnsOf(this.overlayAgent?.rankNetnsFor(jobId) ?? null) }
          : {}),
      ...(options.jobFiles ? { jobFiles: options.jobFiles } : {}),
      host: {
        exclusive: (fn) => this.exclusive(fn),
        ranks: () => this.state.ranks,
        saveRanks: async (ranks) => {
          this.state = { ...this.state, ranks: [...ranks] };
          await this.options.store.save(this.state);
        },
        context: () => ({ policy: this.policy, gpus: this.inventory.gpus, reservations: this.active() }),
        connected: () => this.connected,
      },
    });
    await this.rankAgent.start({ reaped: true });
  }

  private onCommand(msg: Msg): void {
    void this.exclusive(() => this.handleCommand(msg)).catch((error: unknown) => {
      this.log('error', 'command failed', { subject: msg.subject, error: String(error) });
    });
  }

  private async handleCommand(msg: Msg): Promise<void> {
    let envelope;
    try {
      envelope = commandRegistry.parse(msg.json());
    } catch (error) {
      const issues = (error as { issues?: ValidationIssue[] }).issues ?? [
        { path: '', message: String(error) },
      ];
      this.log('warn', 'invalid command refused', { subject: msg.subject, issues });
      const reply: ReservationReply = {
        reservationId: 'unknown',
        outcome: 'declined',
        reasons: issues.slice(0, 64).map((i) => ({
          code: 'INVALID_REQUEST',
          message: i.message.slice(0, 512),
          field: i.path.slice(0, 128) || null,
        })),
      };
      if (msg.reply) msg.respond(JSON.stringify(reply));
      return;
    }
    if (envelope.type === ReleaseOnEdge.type) {
      const { reservationId } = envelope.data;
      const before = this.state.reservations.length;
      const remaining = this.state.reservations.filter((r) => r.reservationId !== reservationId);
      const released = remaining.length !== before;
      if (released) {
        this.state = { ...this.state, reservations: remaining };
        await this.options.store.save(this.state);
        await this.report(EdgeReservationsReported, { reservations: remaining });
        // Ranks still running on it lose their GPUs' reservation: they stop.
        const stopping = this.rankAgent?.stopReservation(reservationId) ?? 0;
        if (stopping > 0)
          this.log('info', 'stopping ranks of a released reservation', { reservationId, stopping });
      }
      const reply: ReleaseReply = { reservationId, released };
      if (msg.reply) msg.respond(JSON.stringify(reply));
      return;
    }
    const request = envelope.data;
    const decision = checkReservation(this.snapshot(), request, this.nowMs());
    if (decision.outcome === 'declined') {
      this.log('info', 'reservation declined', {
        reservationId: request.reservationId,
        reasons: decision.reasons.map((r) => r.code),
      });
      const reply: ReservationReply = {
        reservationId: request.reservationId,
        outcome: 'declined',
        reasons: [...decision.reasons],
      };
      if (msg.reply) msg.respond(JSON.stringify(reply));
      return;
    }
    if (!decision.repeated) {
      this.state = {
        ...this.state,
        reservations: [...this.active(), decision.reservation],
      };
      await this.options.store.save(this.state);
      await this.report(EdgeReservationsReported, { reservations: this.state.reservations });
    }
    this.log('info', 'reservation accepted', {
      reservationId: request.reservationId,
      gpus: decision.reservation.gpuUuids.length,
    });
    const reply: ReservationReply = {
      reservationId: request.reservationId,
      outcome: 'accepted',
      reasons: [],
    };
    if (msg.reply) msg.respond(JSON.stringify(reply));
  }
}
