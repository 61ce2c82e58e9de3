import { TokenBucket } from '@gpunet/overlay';

/*
 * Who is connected to the relay, under which job, and what each job may send: the relay's whole
 * decision logic, pure (time comes in, keys are hex strings). The server asks it, per frame, where a
 * packet goes — only ever to a key connected under the sender's own job.
 */

/** Why a packet was not forwarded. */
export type DropReason =
  /** The destination key is connected under another job: a job tried to reach outside itself. */
  | 'other-job'
  /** The destination key is not connected (not yet, not any more, or not a member at all). */
  | 'no-such-peer'
  /** The job's byte budget is spent for now. */
  | 'rate-limited'
  /** The receiver is slower than its senders: its send queue is full. */
  | 'queue-full';

export const DROP_REASONS: readonly DropReason[] = [
  'other-job',
  'no-such-peer',
  'rate-limited',
  'queue-full',
];

export type Route =
  { readonly kind: 'forward'; readonly to: number } | { readonly kind: 'drop'; readonly reason: DropReason };

/** A job's traffic through this relay since it first connected (or since the relay started). */
export interface JobAccount {
  forwardedPackets: number;
  forwardedBytes: number;
  readonly dropped: Record<DropReason, number>;
}

export interface JoinResult {
  /** A connection of the same (job, key) that the new one replaces (close it). */
  readonly replaced: number | null;
}

interface Job {
  readonly members: Map<string, number>;
  bucket: TokenBucket | null;
  readonly account: JobAccount;
  /** When the last member left (for pruning); null while members are connected. */
  emptySince: number | null;
}

export interface RelayLimits {
  /** Bytes per second a job may send through this relay; 0 = unlimited. */
  readonly jobRateBytesPerSec: number;
  /** Burst on top of the rate, bytes. */
  readonly jobBurstBytes: number;
}

export class RelayTable {
  readonly #jobs = new Map<string, Job>();
  readonly #connections = new Map<number, { readonly jobId: string; readonly keyHex: string }>();
  /** Which job each connected key is in (for telling `other-job` from `no-such-peer`). */
  readonly #keys = new Map<string, string>();

  constructor(private readonly limits: RelayLimits) {}

  /**
   * Files a connection under (job, key). The job's rate is the smaller of the relay's and the one in
   * the member's admission (the control plane's budget for the job). The newest connection of a key
   * wins, as in DERP: an edge that reconnects before the relay noticed its old connection die is
   * not locked out.
   */
  join(
    connectionId: number,
    jobId: string,
    keyHex: string,
    admittedRate: number | undefined,
    nowMs: number,
  ): JoinResult {
    let job = this.#jobs.get(jobId);
    if (!job) {
      job = {
        members: new Map(),
        bucket: null,
        account: {
          forwardedPackets: 0,
          forwardedBytes: 0,
          dropped: { 'other-job': 0, 'no-such-peer': 0, 'rate-limited': 0, 'queue-full': 0 },
        },
        emptySince: null,
      };
      this.#jobs.set(jobId, job);
    }
    const rate = [this.limits.jobRateBytesPerSec, admittedRate ?? 0].filter((r) => r > 0);
    if (rate.length > 0) {
      const perSec = Math.min(...rate);
      if (!job.bucket || job.bucket.ratePerSecond > perSec)
        job.bucket = new TokenBucket(perSec, Math.max(this.limits.jobBurstBytes, 65_536), nowMs);
    }
    const replaced = job.members.get(keyHex) ?? null;
    if (replaced !== null) this.#connections.delete(replaced);
    const otherJob = this.#keys.get(keyHex);
    if (otherJob !== undefined && otherJob !== jobId) {
      // One key, two jobs: keys are per (job, host), so only a misbehaving edge does this. Keep both apart.
      this.#jobs.get(otherJob)?.members.delete(keyHex);
    }
    job.members.set(keyHex, connectionId);
    job.emptySince = null;
    this.#connections.set(connectionId, { jobId, keyHex });
    this.#keys.set(keyHex, jobId);
    return { replaced };
  }

  /** A connection closed. */
  leave(connectionId: number, nowMs: number): void {
    const connection = this.#connections.get(connectionId);
    if (!connection) return;
    this.#connections.delete(connectionId);
    const job = this.#jobs.get(connection.jobId);
    if (job?.members.get(connection.keyHex) === connectionId) {
      job.members.delete(connection.keyHex);
      if (this.#keys.get(connection.keyHex) === connection.jobId) this.#keys.delete(connection.keyHex);
      if (job.members.size === 0) job.emptySince = nowMs;
    }
  }

  /** Where a packet of `bytes` from `connectionId` to `destinationKeyHex` goes. */
  route(connectionId: number, destinationKeyHex: string, bytes: number, nowMs: number): Route {
    const sender = this.#connections.get(connectionId);
    if (!sender) return { kind: 'drop', reason: 'no-such-peer' };
    const job = this.#jobs.get(sender.jobId)!;
    const to = job.members.get(destinationKeyHex);
    if (to === undefined) {
      const reason = this.#keys.has(destinationKeyHex) ? 'other-job' : 'no-such-peer';
      job.account.dropped[reason]++;
      return { kind: 'drop', reason };
    }
    if (job.bucket && !job.bucket.take(bytes, nowMs)) {
      job.account.dropped['rate-limited']++;
      return { kind: 'drop', reason: 'rate-limited' };
    }
    job.account.forwardedPackets++;
    job.account.forwardedBytes += bytes;
    return { kind: 'forward', to };
  }

  /** Counts a routed packet of `bytes` the server then dropped: its receiver's queue was full. */
  droppedAfterRouting(connectionId: number, bytes: number): void {
    const sender = this.#connections.get(connectionId);
    const job = sender && this.#jobs.get(sender.jobId);
    if (!job) return;
    job.account.dropped['queue-full']++;
    job.account.forwardedPackets--;
    job.account.forwardedBytes -= bytes;
  }

  /** The job of a connection. */
  jobOf(connectionId: number): string | undefined {
    return this.#connections.get(connectionId)?.jobId;
  }

  get connections(): number {
    return this.#connections.size;
  }

  /** Accounts of every job the relay knows, by job id. */
  accounts(): ReadonlyMap<string, Readonly<JobAccount> & { readonly members: number }> {
    return new Map([...this.#jobs].map(([id, job]) => [id, { ...job.account, members: job.members.size }]));
  }

  /** Forgets jobs without members for `retentionMs` (their counters with them). */
  prune(nowMs: number, retentionMs: number): string[] {
    const pruned: string[] = [];
    for (const [id, job] of this.#jobs)
      if (job.emptySince !== null && nowMs - job.emptySince >= retentionMs) {
        this.#jobs.delete(id);
        pruned.push(id);
      }
    return pruned;
  }
}
