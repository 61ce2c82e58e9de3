import type { Causation, JobPathReport, OverlayRelay } from '@gpunet/contracts';
import { OVERLAY_INTERFACE, type JobOverlayCoordinator, type PreparedOverlay } from '@gpunet/overlay';
import type { NetworkNode, PreparedNetwork, RankNetwork } from '../app/rank-network.port';

export interface OverlayRankNetworkOptions {
  /** The control plane's side of the overlay (over `natsEdgeOverlayTransport` in the service). */
  readonly coordinator: Pick<JobOverlayCoordinator, 'prepare' | 'teardown'>;
  /** Relays every job may use; the coordinator ranks them per job. Empty: direct paths only. */
  readonly relays: readonly OverlayRelay[];
  /** ed25519 seed signing relay admission tokens; null only without relays. */
  readonly signingKey: string | null;
  /** Publishes the job's path report (`OverlayPathsReported`, through the outbox), caused by `cause`. */
  readonly publishReport: (report: JobPathReport, cause: Causation) => Promise<void>;
  /** Detaches that keep failing, and the ones given up on (the service logs them). */
  readonly onError?: (error: unknown, context: string) => void;
  /** Teardowns of one job tried before its failed detaches are given up on. Default 5. */
  readonly teardownAttempts?: number;
}

interface JobNetwork {
  readonly edgeIds: readonly string[];
  readonly overlay: PreparedOverlay;
  readonly network: PreparedNetwork;
  teardowns: number;
}

/**
 * A job's ranks on its own overlay (ADR 0020): every edge of the gang attaches the job's
 * WireGuard network (`gpunet0` in a rank namespace the edge creates), the coordinator connects them
 * (direct where the NATs allow, through a relay otherwise), and the ranks reach each other at
 * their hosts' overlay addresses — rank 0's is MASTER_ADDR.
 *
 * `prepare` is idempotent per job: the prepared network is kept (memory) and answered again; after
 * a restart it runs the coordinator again, which the edges answer from their current state (attach
 * and connect are idempotent there). Prepares run one at a time so that two jobs never get the same
 * job network (`networksInUse` is what this instance has prepared and not torn down).
 */
export class OverlayRankNetwork implements RankNetwork {
  readonly #jobs = new Map<string, JobNetwork>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: OverlayRankNetworkOptions) {
    if (options.relays.length > 0 && !options.signingKey)
      throw new Error('OverlayRankNetwork: relays need a signing key for their admission tokens');
  }

  /** The job networks in use (prepared, not torn down). */
  get networksInUse(): string[] {
    return [...this.#jobs.values()].map((j) => j.overlay.networkCidr);
  }

  prepare(
    job: { jobId: string; tenantId: string; cause: Causation },
    nodes: readonly NetworkNode[],
  ): Promise<PreparedNetwork> {
    const run = this.#queue.then(() => this.#prepare(job.jobId, job.cause, nodes));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #prepare(jobId: string, cause: Causation, nodes: readonly NetworkNode[]): Promise<PreparedNetwork> {
    const known = this.#jobs.get(jobId);
    if (known) return known.network;
    // One host per edge, in the placement's order (the host of rank 0 first: it gets `.1`).
    const hosts: { edgeId: string; hostId: string }[] = [];
    for (const node of nodes)
      if (!hosts.some((h) => h.edgeId === node.providerId))
        hosts.push({ edgeId: node.providerId, hostId: node.hostId });
    const overlay = await this.options.coordinator.prepare({
      jobId,
      hosts,
      relays: this.options.relays,
      // Without relays no token is signed (the coordinator issues none), so no key is needed.
      admission: { signingKey: this.options.signingKey ?? '' },
      networksInUse: this.networksInUse,
    });
    const addressOf = (providerId: string): string => overlay.addressOf(providerId);
    const network: PreparedNetwork = {
      addressOf: (node) => addressOf(node.providerId),
      interface: OVERLAY_INTERFACE,
      bindInterfaceOf: () => OVERLAY_INTERFACE,
      netnsRequired: true,
      overlayAddressOf: (rank) => addressOf(rank.providerId),
    };
    this.#jobs.set(jobId, { edgeIds: hosts.map((h) => h.edgeId), overlay, network, teardowns: 0 });
    await this.options.publishReport(overlay.report, cause);
    return network;
  }

  /**
   * Detaches every edge of the job: the ones it was prepared on, or — for a job this instance did
   * not prepare (it ended across a restart) — the placement's, once and best effort (detach is
   * idempotent on the edges). Failed detaches of a prepared job reject, so the release retries
   * them, `teardownAttempts` times; then they are reported and given up on (an edge that is gone
   * removes its overlays when it stops or restarts).
   */
  async teardown(jobId: string, nodes: readonly NetworkNode[]): Promise<void> {
    const job = this.#jobs.get(jobId);
    const edgeIds = job ? job.edgeIds : [...new Set(nodes.map((n) => n.providerId))];
    if (edgeIds.length === 0) return;
    const result = await this.options.coordinator.teardown(jobId, edgeIds);
    if (result.failed.length === 0) {
      this.#jobs.delete(jobId);
      return;
    }
    const error = new Error(
      `overlay of job ${jobId}: detach failed on ${result.failed.map((f) => `${f.edgeId} (${f.reason})`).join(', ')}`,
    );
    if (job && ++job.teardowns < (this.options.teardownAttempts ?? 5)) throw error;
    this.#jobs.delete(jobId);
    this.options.onError?.(error, `overlay teardown ${jobId} (given up)`);
  }
}
