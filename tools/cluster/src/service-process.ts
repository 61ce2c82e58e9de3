import { type Netns, REPO_ROOT, TestProcess, tsxArgv, tsxEnv } from '@gpunet/netns-testbed';

/** The control-plane services a development cluster can run (each `services/<name>/src/main.ts`). */
export const CONTROL_PLANE_SERVICES = [
  'discovery',
  'benchmarking',
  'settlement',
  'scheduler',
  'execution',
  'gateway',
  'relay',
] as const;
export type ControlPlaneService = (typeof CONTROL_PLANE_SERVICES)[number];

const NSENTER = '/usr/bin/nsenter';

/** A service did not come up: it exited, or said nothing like "started" in time. */
export class ServiceStartError extends Error {
  override readonly name = 'ServiceStartError';
  readonly code = 'SERVICE_START_FAILED' as const;
}

export interface ServiceProcessOptions {
  readonly name: string;
  /** The TypeScript entry point, relative to the repository root. */
  readonly main: string;
  readonly args?: readonly string[];
  /** Added to the caller's environment. */
  readonly env?: Record<string, string>;
  /** The log line that says the process is up. Default: `"<name> started"` (runService). */
  readonly ready?: RegExp;
  readonly startTimeoutMs?: number;
  /** Run inside this network namespace. */
  readonly netns?: Netns;
  /**
   * How to enter `netns`: `ip netns exec` (default; it also gives the process a private mount
   * namespace) or `nsenter --net` (the network namespace only): a process that creates named
   * namespaces itself (an edge with job overlays: `ip netns add`) must use `nsenter`, or the bind
   * mounts under /run/netns it makes stay invisible to the rest of the machine.
   */
  readonly enter?: 'netns-exec' | 'nsenter';
}

/**
 * One gpunet process of a development cluster (a service or an edge), from the repository's
 * sources under tsx: its JSON log kept, started and stopped like production (SIGTERM, grace,
 * SIGKILL), restartable (the same options), and killable without a goodbye (SIGKILL) to test
 * recovery.
 */
export class ServiceProcess {
  private proc: TestProcess | undefined;
  private generation = 0;

  constructor(readonly options: ServiceProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** Output of the current run (stdout then stderr). */
  get output(): string {
    return this.proc?.output ?? '';
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exit === undefined;
  }

  async start(): Promise<this> {
    if (this.running) return this;
    this.generation += 1;
    const { name, main, args = [], env = {}, netns } = this.options;
    const argv = tsxArgv(main, args);
    const label = `${name}#${this.generation}`;
    const environment = tsxEnv(env);
    this.proc =
      netns === undefined
        ? new TestProcess(label, argv, { env: environment, cwd: REPO_ROOT })
        : this.options.enter === 'nsenter'
          ? new TestProcess(label, [NSENTER, `--net=/run/netns/${netns.name}`, ...argv], {
              env: environment,
              cwd: REPO_ROOT,
            })
          : netns.spawn(label, argv, { env: environment, cwd: REPO_ROOT });
    const ready = this.options.ready ?? new RegExp(`"msg":"${name} started"`);
    try {
      await this.proc.waitForOutput(ready, { timeoutMs: this.options.startTimeoutMs ?? 90_000 });
    } catch (error) {
      await this.proc.stop(1_000).catch(() => undefined);
      throw new ServiceStartError(
        `${name} did not start: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
    return this;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.proc || this.proc.exit) return;
    await this.proc.stop(graceMs);
  }

  /** Dies at once, as in a crash or an OOM kill: no shutdown hooks run. */
  async kill(): Promise<void> {
    if (!this.proc || this.proc.exit) return;
    this.proc.kill('SIGKILL');
    await this.proc.exited;
  }

  /** Resolves with the first match of `pattern` in the current run's output. */
  waitForOutput(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    if (!this.proc) return Promise.reject(new Error(`${this.name} is not running`));
    return this.proc.waitForOutput(pattern, { timeoutMs });
  }
}
