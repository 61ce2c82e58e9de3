import { createHash } from 'node:crypto';
import {
  AttachOverlay,
  ConnectOverlayPeers,
  createRegistry,
  DetachOverlay,
  OverlayAttachReplySchema,
  OverlayConnectReplySchema,
  type PayloadOf,
} from '@gpunet/contracts';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import {
  describeError,
  failed,
  type OverlayCommandKind,
  OverlayDetachReplySchema,
  type OverlayReplyOf,
} from '../command-plane/replies';
import type { NetnsRef } from '../netns/netns';
import type { AttachOverlayOptions, ConnectPeersOptions, OverlayLog } from './job-overlay';
import { type AttachedOverlay, type EdgeOverlayRuntime, hostOverlayRuntime } from './overlay-runtime';

export type AttachOverlayCommand = PayloadOf<typeof AttachOverlay>;
export type ConnectOverlayPeersCommand = PayloadOf<typeof ConnectOverlayPeers>;
export type DetachOverlayCommand = PayloadOf<typeof DetachOverlay>;

/** Host-level settings of every job's `JobOverlay.attach` (the command supplies the job's own). */
export type EdgeAttachSettings = Omit<
  AttachOverlayOptions,
  'jobId' | 'networkCidr' | 'address' | 'relays' | 'rankNetns' | 'mtu' | 'log' | 'keys'
>;

export interface EdgeOverlayAgentOptions {
  readonly nc: NatsConnection;
  /** This edge's id (its public nkey): the token of the command subjects it answers. */
  readonly edgeId: string;
  /** Subject namespace (tests). Default ''. */
  readonly prefix?: string;
  /**
   * Start of the rank namespaces' names, `<netnsPrefix>-<12 hex digits of sha256(jobId)>`. Default
   * `gpunet`. Named namespaces are machine-wide: several agents on one machine (the namespace
   * testbed) need distinct prefixes.
   */
  readonly netnsPrefix?: string;
  /** Host-level attach settings: backend, host addresses offered, STUN timeout, relay CA, keepalives. */
  readonly attach?: EdgeAttachSettings;
  /** Probe window, throughput measurement and the like for every connect. */
  readonly connect?: Omit<ConnectPeersOptions, 'admissionToken'>;
  /**
   * Where a job's ranks run, when the edge provides the namespace itself (a Docker network sandbox:
   * `{ pid }` of its container). Default: a named namespace the agent creates and deletes.
   */
  readonly rankNamespaces?: RankNamespaceProvider;
  /** The privileged host work. Default: `hostOverlayRuntime()` (`ip netns`, `JobOverlay`). */
  readonly runtime?: EdgeOverlayRuntime;
  readonly log?: OverlayLog;
  /**
   * Called once per answered command with its outcome and how long it took (wall clock, ms) — for
   * the edge's metrics (a counter by kind and outcome, a histogram of durations).
   */
  readonly onAnswered?: (kind: OverlayCommandKind, outcome: string, durationMs: number) => void;
}

/** Supplies (and removes) the network namespace a job's ranks run in. */
export interface RankNamespaceProvider {
  /** The job's rank namespace, created when needed. */
  acquire(jobId: string): Promise<NetnsRef>;
  /** Removes what `acquire` created; idempotent (also for a job it never saw). */
  release(jobId: string): Promise<void>;
}

interface JobEntry {
  readonly netns: NetnsRef;
  readonly networkCidr: string;
  readonly address: string;
  readonly overlay: AttachedOverlay;
  connected: boolean;
}

const registries = {
  attach: createRegistry([AttachOverlay]),
  connect: createRegistry([ConnectOverlayPeers]),
  detach: createRegistry([DetachOverlay]),
} as const;

const replySchemas = {
  attach: OverlayAttachReplySchema,
  connect: OverlayConnectReplySchema,
  detach: OverlayDetachReplySchema,
} as const;

const NETNS_PREFIX = /^[A-Za-z0-9_.-]{1,40}$/;

/** The rank namespace of a job on an edge: `<prefix>-<12 hex digits of sha256(jobId)>`. */
export const rankNetnsName = (jobId: string, prefix = 'gpunet'): string => {
  if (!NETNS_PREFIX.test(prefix))
    throw new Error(`netnsPrefix ${JSON.stringify(prefix)} must be 1-40 characters of A-Z a-z 0-9 _ . -`);
  return `${prefix}-${createHash('sha256').update(jobId).digest('hex').slice(0, 12)}`;
};

const decoder = new TextDecoder();

/**
 * The edge's side of the overlay command plane (ADR 0020, `docs/networking.md`): answers
 * `cmd.edge.{edgeId}.attach-overlay.v1`, `…connect-overlay-peers.v1` and `…detach-overlay.v1`.
 *
 * - attach: creates the job's rank namespace (`netnsFor(jobId)`; the rank runtime starts the ranks
 *   in it), attaches `JobOverlay` with its interface moved there as `gpunet0`, replies the endpoint.
 *   Repeating the same attach (a retry after a lost reply) answers the same endpoint.
 * - connect: `connectPeers` with the admission token, replies the edge's path report; a repeat
 *   answers the current report.
 * - detach: removes the interface, the relay connection and the namespace; idempotent.
 *
 * Every command is validated (envelope and payload, the contracts registry); anything malformed is
 * answered `failed` with the field at fault — never a crash, never silence. Commands of one job run
 * one after another, in arrival order; different jobs run concurrently.
 */
export class EdgeOverlayAgent {
  readonly #jobs = new Map<string, JobEntry>();
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #runtime: EdgeOverlayRuntime;
  readonly #netnsPrefix: string;
  readonly #namespaces: RankNamespaceProvider;
  #subscriptions: Subscription[] = [];
  #stopping = false;

  constructor(private readonly options: EdgeOverlayAgentOptions) {
    this.#runtime = options.runtime ?? hostOverlayRuntime(options.attach ?? {});
    this.#netnsPrefix = options.netnsPrefix ?? 'gpunet';
    rankNetnsName('probe', this.#netnsPrefix); // validates the prefix now, not at the first command
    this.#namespaces = options.rankNamespaces ?? {
      acquire: async (jobId) => {
        const name = rankNetnsName(jobId, this.#netnsPrefix);
        await this.#runtime.createNetns(name);
        return { name };
      },
      release: (jobId) => this.#runtime.deleteNetns(rankNetnsName(jobId, this.#netnsPrefix)),
    };
  }

  /** Subscribes to this edge's three overlay commands (and waits until the server has them). */
  async start(): Promise<void> {
    const { nc, edgeId } = this.options;
    const prefix = this.options.prefix ?? '';
    const subscribe = (kind: OverlayCommandKind, subject: string) =>
      nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error)
            this.#log('error', 'overlay command subscription failed', { kind, error: String(error) });
          else void this.#answer(kind, msg);
        },
      });
    this.#subscriptions = [
      subscribe('attach', AttachOverlay.subject({ edgeId }, prefix)),
      subscribe('connect', ConnectOverlayPeers.subject({ edgeId }, prefix)),
      subscribe('detach', DetachOverlay.subject({ edgeId }, prefix)),
    ];
    await nc.flush();
    this.#log('info', 'edge overlay agent started', { edgeId });
  }

  /**
   * The named rank namespace of an attached job (run its ranks with `ip netns exec <name>`), or null
   * (not attached, or a namespace from `rankNamespaces` given by pid).
   */
  netnsFor(jobId: string): string | null {
    const netns = this.#jobs.get(jobId)?.netns;
    return netns && 'name' in netns ? netns.name : null;
  }

  /** The rank namespace of an attached job, however it is referenced; null when not attached. */
  rankNetnsFor(jobId: string): NetnsRef | null {
    return this.#jobs.get(jobId)?.netns ?? null;
  }

  /** Jobs attached on this edge now. */
  get jobIds(): string[] {
    return [...this.#jobs.keys()];
  }

  /**
   * Stops answering and detaches every job (interfaces, relay connections, namespaces). Commands
   * arriving meanwhile are answered `failed`.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const s of this.#subscriptions) s.unsubscribe();
    this.#subscriptions = [];
    // Commands already accepted finish first (no new ones are queued once stopping): whatever they
    // attached is then detached below.
    await Promise.allSettled([...this.#queues.values()]);
    await Promise.allSettled(
      [...this.#jobs.keys()].map((jobId) =>
        this.#serial(jobId, async () => {
          const reply = await this.#detach({ jobId });
          if (reply.outcome === 'failed')
            this.#log('error', 'detach on stop failed', { jobId, reason: reply.reason });
        }),
      ),
    );
    await Promise.allSettled([...this.#queues.values()]);
  }

  /**
   * Answers one command's bytes (what the subscription does for each message; tests call it
   * directly). Always resolves to a reply of the command's reply contract.
   */
  async handle<K extends OverlayCommandKind>(kind: K, data: Uint8Array | string): Promise<OverlayReplyOf[K]> {
    let reply: OverlayReplyOf[OverlayCommandKind];
    try {
      reply = await this.#handle(kind, data);
    } catch (error) {
      reply = failed(describeError(error));
    }
    const checked = replySchemas[kind].safeParse(reply);
    if (!checked.success) {
      this.#log('error', 'built an off-contract reply', { kind, error: checked.error.message });
      return failed(`the edge built an off-contract ${kind} reply: ${checked.error.message}`);
    }
    return checked.data as OverlayReplyOf[K];
  }

  async #answer(kind: OverlayCommandKind, msg: Msg): Promise<void> {
    const started = performance.now();
    const reply = await this.handle(kind, msg.data);
    try {
      this.options.onAnswered?.(kind, reply.outcome, performance.now() - started);
    } catch (error) {
      this.#log('error', 'onAnswered threw', { kind, error: String(error) });
    }
    if (reply.outcome === 'failed') this.#log('warn', `overlay ${kind} failed`, { reason: reply.reason });
    try {
      if (msg.reply) msg.respond(JSON.stringify(reply));
    } catch (error) {
      this.#log('error', 'could not send the reply', { kind, error: String(error) });
    }
  }

  async #handle(
    kind: OverlayCommandKind,
    data: Uint8Array | string,
  ): Promise<OverlayReplyOf[OverlayCommandKind]> {
    let raw: unknown;
    try {
      raw = JSON.parse(typeof data === 'string' ? data : decoder.decode(data));
    } catch (error) {
      return failed(`the command is not JSON: ${describeError(error)}`);
    }
    let envelope;
    try {
      envelope = registries[kind].parse(raw);
    } catch (error) {
      // InvalidMessageError names every bad field (`data.networkCidr: must be …`).
      return failed(describeError(error));
    }
    if (this.#stopping) return failed('the edge overlay agent is stopping');
    const command = envelope.data;
    return this.#serial(command.jobId, (): Promise<OverlayReplyOf[OverlayCommandKind]> => {
      switch (kind) {
        case 'attach':
          return this.#attach(command as AttachOverlayCommand);
        case 'connect':
          return this.#connect(command as ConnectOverlayPeersCommand);
        case 'detach':
          return this.#detach(command);
        default: {
          const never: never = kind;
          throw new Error(`unknown overlay command ${String(never)}`);
        }
      }
    });
  }

  /** Runs `work` after every earlier command of the same job has finished. */
  #serial<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(jobId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(jobId, settled);
    void settled.then(() => {
      if (this.#queues.get(jobId) === settled) this.#queues.delete(jobId);
    });
    return next;
  }

  async #attach(command: AttachOverlayCommand): Promise<OverlayReplyOf['attach']> {
    const existing = this.#jobs.get(command.jobId);
    if (existing) {
      if (existing.networkCidr === command.networkCidr && existing.address === command.address)
        return { outcome: 'attached', endpoint: existing.overlay.endpoint };
      return failed(
        `job ${command.jobId} is already attached on this edge as ${existing.address} in ${existing.networkCidr}; detach it first`,
      );
    }
    const unavailable = await this.#runtime.unavailable();
    if (unavailable !== null) return failed(unavailable);
    let netns: NetnsRef;
    try {
      netns = await this.#namespaces.acquire(command.jobId);
    } catch (error) {
      return failed(`could not create the job's rank namespace: ${describeError(error)}`);
    }
    let overlay: AttachedOverlay;
    try {
      overlay = await this.#runtime.attach({
        ...this.options.attach,
        jobId: command.jobId,
        networkCidr: command.networkCidr,
        address: command.address,
        relays: command.relays.map((r) => ({
          relayId: r.relayId,
          host: r.host,
          port: r.port,
          stunPorts: r.stunPorts,
          tls: r.tls,
          ...(r.servername === undefined ? {} : { servername: r.servername }),
        })),
        mtu: command.mtu,
        rankNetns: netns,
        ...(this.options.log ? { log: this.options.log } : {}),
      });
    } catch (error) {
      await this.#namespaces
        .release(command.jobId)
        .catch((e: unknown) =>
          this.#log('error', 'could not remove the rank namespace', { netns, error: describeError(e) }),
        );
      return failed(`attach failed: ${describeError(error)}`);
    }
    this.#jobs.set(command.jobId, {
      netns,
      networkCidr: command.networkCidr,
      address: command.address,
      overlay,
      connected: false,
    });
    this.#log('info', 'overlay attached', { jobId: command.jobId, netns, address: command.address });
    return { outcome: 'attached', endpoint: overlay.endpoint };
  }

  async #connect(command: ConnectOverlayPeersCommand): Promise<OverlayReplyOf['connect']> {
    const job = this.#jobs.get(command.jobId);
    if (!job) return failed(`job ${command.jobId} is not attached on this edge (send attach-overlay first)`);
    if (job.connected) return { outcome: 'connected', report: await job.overlay.pathReport() };
    try {
      const report = await job.overlay.connectPeers(command.peers, {
        ...this.options.connect,
        admissionToken: command.admissionToken,
      });
      job.connected = true;
      return { outcome: 'connected', report };
    } catch (error) {
      return failed(`connect failed: ${describeError(error)}`);
    }
  }

  async #detach(command: DetachOverlayCommand): Promise<OverlayReplyOf['detach']> {
    const job = this.#jobs.get(command.jobId);
    try {
      await job?.overlay.detach();
      this.#jobs.delete(command.jobId);
      // Also after a restart of the agent, when a namespace of the job may be left from before.
      if (job || (await this.#runtime.unavailable()) === null) await this.#namespaces.release(command.jobId);
    } catch (error) {
      return failed(`detach failed: ${describeError(error)}`);
    }
    if (job) this.#log('info', 'overlay detached', { jobId: command.jobId, netns: job.netns });
    return { outcome: 'detached' };
  }

  #log(level: Parameters<OverlayLog>[0], message: string, fields?: Record<string, unknown>): void {
    this.options.log?.(level, message, fields);
  }
}
