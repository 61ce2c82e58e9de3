import {
  AttachOverlay,
  type Clock,
  type EdgePathReport,
  type InputOf,
  type JobPathReport,
  type OverlayEndpoint,
  type OverlayPeer,
  systemClock,
} from '@gpunet/contracts';
import { issueAdmissionToken } from '../admission';
import { allocateJobNetwork, assignHostAddresses } from '../domain/addressing';
import { buildJobPathReport } from '../domain/path-report';
import { rankRelays, type RelayAddress } from '../domain/relay-choice';
import type { OverlayLog } from '../edge/job-overlay';
import type { EdgeOverlayTransport } from './edge-overlay-transport';

/** The name of the job's interface inside every rank namespace (`rankNetworkEnv` points frameworks at it). */
export const OVERLAY_INTERFACE = 'gpunet0';

/** A relay as the control plane knows it (the contracts' `OverlayRelay`, `tls` optional). */
export type OverlayRelayInput = RelayAddress;

export interface OverlayHostRef {
  readonly edgeId: string;
  /** The placement's host id (kept in the result, for the caller's mapping). */
  readonly hostId: string;
}

export interface PrepareOverlayRequest {
  readonly jobId: string;
  /** The job's hosts in rank order: the host of rank 0 gets `.1`, which is `MASTER_ADDR`. One per edge. */
  readonly hosts: readonly OverlayHostRef[];
  /** Relays the job may use, in any order (ranked per job by `rankRelays`); empty: direct paths only. */
  readonly relays: readonly OverlayRelayInput[];
  /** The control plane's ed25519 signing key (32 raw bytes, base64) for admission tokens; see admission.ts. */
  readonly admission: { readonly signingKey: string; readonly rateBytesPerSec?: number };
  /** Job networks in use now (the new one overlaps none of them). */
  readonly networksInUse: readonly string[];
  /** Networks the hosts use themselves (providers' LANs), also avoided. */
  readonly avoidNetworks?: readonly string[];
  readonly mtu?: number;
}

export interface PreparedOverlay {
  readonly jobId: string;
  readonly networkCidr: string;
  readonly interface: typeof OVERLAY_INTERFACE;
  /** The overlay address of the host of rank 0. */
  readonly masterAddr: string;
  /** Overlay address by edge id. */
  readonly addresses: Readonly<Record<string, string>>;
  /** The overlay address of an edge of the job; throws for an edge that is not in it. */
  addressOf(edgeId: string): string;
  readonly hosts: readonly (OverlayHostRef & { readonly address: string })[];
  readonly endpoints: Readonly<Record<string, OverlayEndpoint>>;
  /** Each edge's own report, by edge id. */
  readonly edgeReports: Readonly<Record<string, EdgePathReport>>;
  /** The job's report: direct / relayed per pair of hosts (publish it as `OverlayPathsReported`). */
  readonly report: JobPathReport;
}

export type OverlayStage = 'attach' | 'connect';

export interface EdgeOverlayFailure {
  readonly edgeId: string;
  readonly stage: OverlayStage;
  /** `failed`: the edge said so (and cleaned up); `unanswered`: no usable reply before the deadline. */
  readonly outcome: 'failed' | 'unanswered';
  readonly reason: string;
}

/**
 * An edge could not attach or connect (it said so, did not answer in time, or was unreachable).
 * `edgeId`, `stage` and `reason` are the first failure in rank order; `failures` lists all of them.
 * The edges that had attached were sent DetachOverlay before this was thrown.
 */
export class OverlayPrepareError extends Error {
  override readonly name = 'OverlayPrepareError';
  readonly code = 'OVERLAY_PREPARE_FAILED' as const;
  readonly edgeId: string;
  readonly stage: OverlayStage;
  readonly reason: string;
  constructor(
    readonly jobId: string,
    readonly failures: readonly EdgeOverlayFailure[],
  ) {
    const first = failures[0]!;
    super(
      `overlay of job ${jobId}: edge ${first.edgeId} failed to ${first.stage}: ${first.reason}` +
        (failures.length > 1 ? ` (and ${failures.length - 1} more edge(s))` : ''),
    );
    this.edgeId = first.edgeId;
    this.stage = first.stage;
    this.reason = first.reason;
  }
}

/** The request itself is unusable (no hosts, an edge twice, a bad job id or relay): nothing was sent. */
export class InvalidOverlayRequestError extends Error {
  override readonly name = 'InvalidOverlayRequestError';
  readonly code = 'INVALID_OVERLAY_REQUEST' as const;
}

export interface TeardownResult {
  readonly detached: readonly string[];
  readonly failed: readonly { readonly edgeId: string; readonly reason: string }[];
}

export interface JobOverlayCoordinatorOptions {
  readonly transport: EdgeOverlayTransport;
  readonly clock?: Clock;
  /** Deadline of each edge's attach (interface, STUN). Default 30 s. */
  readonly attachTimeoutMs?: number;
  /** Deadline of each edge's connect (relay, probe window, throughput burst, hand-off). Default 60 s. */
  readonly connectTimeoutMs?: number;
  /** Deadline of each edge's detach. Default 15 s. */
  readonly detachTimeoutMs?: number;
  /** How long admission tokens let edges (re)connect to the relay. Default 7 days. */
  readonly tokenTtlMs?: number;
  readonly log?: OverlayLog;
}

/**
 * The control plane's side of a job's overlay (ADR 0020): allocates the job network, has every edge
 * attach (in parallel, each with a deadline), signs an admission token per reported key, hands every
 * edge its peers at the same time (so that they probe and punch together) and folds the edges'
 * reports into the job's. On any failure the edges that attached are detached and
 * `OverlayPrepareError` names the edge and the reason. Stateless: the caller keeps the network
 * (for `networksInUse`) and calls `teardown` when the job ends.
 */
export class JobOverlayCoordinator {
  readonly #clock: Clock;

  constructor(private readonly options: JobOverlayCoordinatorOptions) {
    this.#clock = options.clock ?? systemClock;
  }

  async prepare(request: PrepareOverlayRequest): Promise<PreparedOverlay> {
    const { jobId, hosts } = request;
    if (hosts.length === 0) throw new InvalidOverlayRequestError(`job ${jobId} has no hosts`);
    const edgeIds = hosts.map((h) => h.edgeId);
    let networkCidr: string;
    let addresses: Record<string, string>;
    try {
      networkCidr = allocateJobNetwork(request.networksInUse, {
        ...(request.avoidNetworks ? { avoid: request.avoidNetworks } : {}),
      });
      addresses = assignHostAddresses(networkCidr, edgeIds);
    } catch (error) {
      throw new InvalidOverlayRequestError(`job ${jobId}: ${(error as Error).message}`, { cause: error });
    }
    const relays = rankRelays(jobId, request.relays);
    const attachCommand = (edgeId: string): InputOf<typeof AttachOverlay> => ({
      jobId,
      networkCidr,
      address: addresses[edgeId]!,
      relays: relays.map((r) => ({ ...r, stunPorts: [...r.stunPorts] })),
      ...(request.mtu === undefined ? {} : { mtu: request.mtu }),
    });
    const checked = AttachOverlay.schema.safeParse(attachCommand(edgeIds[0]!));
    if (!checked.success)
      throw new InvalidOverlayRequestError(
        `job ${jobId}: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );

    // 1. Every edge attaches: key pair, interface in the rank namespace, candidates.
    const attachReplies = await Promise.all(
      edgeIds.map((edgeId) =>
        this.options.transport.attach(edgeId, attachCommand(edgeId), this.options.attachTimeoutMs ?? 30_000),
      ),
    );
    const attachFailures: EdgeOverlayFailure[] = [];
    const endpoints: Record<string, OverlayEndpoint> = {};
    attachReplies.forEach((reply, i) => {
      const edgeId = edgeIds[i]!;
      if (reply.outcome === 'attached') endpoints[edgeId] = reply.endpoint;
      else attachFailures.push({ edgeId, stage: 'attach', outcome: reply.outcome, reason: reply.reason });
    });
    if (attachFailures.length > 0) {
      // An edge that answered `failed` has cleaned up; one that did not answer may still attach late.
      await this.#detachQuietly(
        jobId,
        edgeIds.filter((_, i) => attachReplies[i]!.outcome !== 'failed'),
      );
      throw new OverlayPrepareError(jobId, attachFailures);
    }

    // 2. Tokens for the reported keys, then every edge gets its peers at once.
    const peers: OverlayPeer[] = edgeIds.map((edgeId) => ({
      edgeId,
      publicKey: endpoints[edgeId]!.publicKey,
      address: endpoints[edgeId]!.address,
      candidates: endpoints[edgeId]!.candidates,
    }));
    const exp = this.#clock.now().getTime() + (this.options.tokenTtlMs ?? 7 * 24 * 3_600_000);
    const tokenFor = (edgeId: string): string | null =>
      relays.length === 0
        ? null
        : issueAdmissionToken(
            {
              jobId,
              publicKey: endpoints[edgeId]!.publicKey,
              exp,
              ...(request.admission.rateBytesPerSec === undefined
                ? {}
                : { rateBytesPerSec: request.admission.rateBytesPerSec }),
            },
            request.admission.signingKey,
          );
    const connectReplies = await Promise.all(
      edgeIds.map((edgeId) =>
        this.options.transport.connect(
          edgeId,
          { jobId, peers, admissionToken: tokenFor(edgeId) },
          this.options.connectTimeoutMs ?? 60_000,
        ),
      ),
    );
    const connectFailures: EdgeOverlayFailure[] = [];
    const edgeReports: Record<string, EdgePathReport> = {};
    connectReplies.forEach((reply, i) => {
      const edgeId = edgeIds[i]!;
      if (reply.outcome === 'connected') edgeReports[edgeId] = reply.report;
      else connectFailures.push({ edgeId, stage: 'connect', outcome: reply.outcome, reason: reply.reason });
    });
    if (connectFailures.length > 0) {
      await this.#detachQuietly(jobId, edgeIds);
      throw new OverlayPrepareError(jobId, connectFailures);
    }

    const report = buildJobPathReport(jobId, Object.values(edgeReports), this.#clock.now().toISOString());
    this.options.log?.('info', 'job overlay prepared', {
      jobId,
      networkCidr,
      direct: report.direct,
      relayed: report.relayed,
      other: report.other,
    });
    return {
      jobId,
      networkCidr,
      interface: OVERLAY_INTERFACE,
      masterAddr: addresses[edgeIds[0]!]!,
      addresses,
      addressOf: (edgeId: string) => {
        const address = addresses[edgeId];
        if (address === undefined)
          throw new InvalidOverlayRequestError(`edge ${edgeId} is not in job ${jobId}`);
        return address;
      },
      hosts: hosts.map((h) => ({ ...h, address: addresses[h.edgeId]! })),
      endpoints,
      edgeReports,
      report,
    };
  }

  /** Sends DetachOverlay to the edges (in parallel; idempotent on the edge) and says which answered. */
  async teardown(jobId: string, edgeIds: readonly string[]): Promise<TeardownResult> {
    const replies = await Promise.all(
      edgeIds.map((edgeId) =>
        this.options.transport.detach(edgeId, { jobId }, this.options.detachTimeoutMs ?? 15_000),
      ),
    );
    const detached: string[] = [];
    const failed: { edgeId: string; reason: string }[] = [];
    replies.forEach((reply, i) => {
      if (reply.outcome === 'detached') detached.push(edgeIds[i]!);
      else failed.push({ edgeId: edgeIds[i]!, reason: reply.reason });
    });
    if (failed.length > 0) this.options.log?.('warn', 'job overlay teardown incomplete', { jobId, failed });
    return { detached, failed };
  }

  async #detachQuietly(jobId: string, edgeIds: readonly string[]): Promise<void> {
    if (edgeIds.length === 0) return;
    await this.teardown(jobId, edgeIds);
  }
}
