/*
 * The port the rank agent runs ranks through. Its adapters, in `infra/runtime/`, are the edge's rank
 * runtimes (the process runtime for development and CI, the docker runtime for providers): both start
 * one rank of a job from a validated `RankLaunch`, stream its output, report its exit and stop it.
 * The rank agent (rank-agent.ts) validates commands against the policy and the reservation, picks
 * the runtime the command names and owns the bookkeeping (idempotent starts, status reports, logs to
 * NATS, cleanup after an edge restart).
 */

/**
 * The labels the rank agent puts on every rank (`RankLaunch.labels`): runtimes attach them to what
 * they create (pid records, containers) and `reapOrphans(edgeId)` matches `gpunet.edge`.
 */
export const RANK_LABELS = {
  edge: 'gpunet.edge',
  job: 'gpunet.job',
  attempt: 'gpunet.attempt',
  rank: 'gpunet.rank',
} as const;

/** Everything a runtime needs to start one rank; already validated and resolved by the rank agent. */
export interface RankLaunch {
  readonly jobId: string;
  readonly attempt: number;
  readonly rank: number;
  /** Container image (docker); null for the process runtime. */
  readonly image: string | null;
  /** argv (no shell). For docker: the container's command; `entrypoint` overrides the image's. */
  readonly cmd: readonly string[];
  readonly entrypoint: readonly string[] | null;
  /** The rank's complete environment (nothing is inherited from the edge's own environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute host path of the rank's workspace (created by the agent, owned by the rank). */
  readonly workspace: string;
  /** Absolute path inside `workspace` to start in (already checked to stay inside it). */
  readonly workingDir: string;
  /** Reserved GPUs this rank may see (exact UUIDs; never "all"). */
  readonly gpuUuids: readonly string[];
  /** Vendor of those GPUs, for device requests; null when none. */
  readonly gpuVendor: 'nvidia' | 'amd' | null;
  readonly limits: {
    readonly cpuMillicores: number;
    readonly memoryBytes: number;
    readonly pids: number | null;
  };
  /**
   * Network namespace the rank runs in (the job's overlay): a named one (`ip netns`, the process
   * runtime), or `pid:<n>` for one the runtime provided itself (`jobNetworks`: docker's job
   * sandbox). Null: no job network (the host's for the process runtime, none for docker).
   */
  readonly netns: string | null;
  /** Labels that identify what the runtime created as gpunet's (containers, cgroups, pid files). */
  readonly labels: Readonly<Record<string, string>>;
}

/** How a rank ended. */
export interface RankExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when the runtime knows why (`oom`, `pids-limit`, `stopped`). */
  readonly reason: string | null;
}

/** A rank the runtime started. */
export interface RunningRank {
  /** Runtime-specific id (pid, container id) for logs and cleanup. */
  readonly id: string;
  /** Each complete line of output, as it comes; the agent buffers and ships them (never blocks). */
  onOutput(listener: (stream: 'stdout' | 'stderr', line: string) => void): void;
  /** Settles once, when the rank has exited and its resources are released. */
  readonly exited: Promise<RankExit>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. Idempotent. */
  stop(graceMs: number): Promise<RankExit>;
}

/**
 * A runtime that makes each job's network namespace itself (docker: the job's sandbox container,
 * whose namespace every rank container of the job joins). The edge's overlay agent attaches the
 * job's interface there instead of in a named namespace of its own.
 */
export interface JobNetworkProvider {
  /** The namespace of the job's ranks on this host (its holder's pid), created on first call. */
  acquire(jobId: string): Promise<{ readonly pid: number }>;
  /** Removes it; idempotent (also for a job it never saw). */
  release(jobId: string): Promise<void>;
}

export interface RankRuntime {
  readonly kind: 'process' | 'docker';
  /** Set when the runtime provides its jobs' network namespaces (see `JobNetworkProvider`). */
  readonly jobNetworks?: JobNetworkProvider;
  /**
   * Makes the rank's workspace (an empty directory the agent created, or one an earlier attempt
   * left) ready before `start`: the docker runtime mounts the rank's own file system there, sized
   * by the policy's `disk.workspace_per_rank`. Idempotent: a workspace already prepared is kept as it
   * is (checkpoints survive attempts). Rejects with a `RankStartError`. Absent: nothing to prepare.
   * Whatever it mounts, `removeWorkspaces` (infra/workspace.ts) unmounts before removing.
   */
  prepareWorkspace?(workspace: string): Promise<void>;
  /** Null when the runtime can run ranks here; else why not (for RUNTIME_UNAVAILABLE). */
  unavailable(): Promise<string | null>;
  /** Starts the rank; rejects with a `RankStartError` when it cannot be created. */
  start(launch: RankLaunch): Promise<RunningRank>;
  /**
   * Removes what an earlier run of this edge left behind (processes, containers) carrying
   * `labels` matching `edgeId`; returns how many it stopped. Called once at edge start.
   */
  reapOrphans(edgeId: string): Promise<number>;
}

/**
 * A rank could not be created (binary or image missing, invalid device…); nothing was left running.
 * `code` is the rejection the rank agent answers: START_FAILED, or RUNTIME_UNAVAILABLE when this
 * edge cannot run such a rank at all (a network namespace without root, …).
 */
export class RankStartError extends Error {
  override readonly name = 'RankStartError';
  constructor(
    message: string,
    readonly field: string | null = null,
    readonly code: 'START_FAILED' | 'RUNTIME_UNAVAILABLE' = 'START_FAILED',
  ) {
    super(message);
  }
}
