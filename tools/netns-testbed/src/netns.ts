import { run, type RunOptions, type RunResult } from './command';
import { TestProcess } from './process';
import { REPO_ROOT } from './scripts';

/** Where a namespace's processes are registered, so that the testbed can stop them all. */
export interface ProcessRegistry {
  register(process: TestProcess): void;
}

/**
 * One network namespace of a testbed: a "host", a NAT router, a rank's container. Every command runs
 * inside it (`ip -n`, `ip netns exec`); nothing touches the machine's own namespace.
 */
export class Netns {
  constructor(
    /** The namespace's name as `ip netns` knows it (unique on the machine). */
    readonly name: string,
    private readonly registry: ProcessRegistry,
  ) {}

  /** `ip -n <ns> <args…>`. */
  ip(args: readonly string[], options?: RunOptions): Promise<RunResult> {
    return run(['ip', '-n', this.name, ...args], options);
  }

  /** Runs a short command inside the namespace. */
  exec(argv: readonly string[], options?: RunOptions): Promise<RunResult> {
    return run(['ip', 'netns', 'exec', this.name, ...argv], options);
  }

  /**
   * Starts a long-running process inside the namespace (cwd: the repository root); the testbed stops
   * it on `destroy()`.
   */
  spawn(label: string, argv: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
    const process = new TestProcess(
      `${label} (in ${this.name})`,
      ['ip', 'netns', 'exec', this.name, ...argv],
      {
        cwd: REPO_ROOT,
        ...options,
      },
    );
    this.registry.register(process);
    return process;
  }

  async addAddress(ifname: string, cidr: string): Promise<void> {
    await this.ip(['addr', 'add', cidr, 'dev', ifname]);
  }

  async up(ifname: string): Promise<void> {
    await this.ip(['link', 'set', ifname, 'up']);
  }

  async addRoute(destination: string, via: string): Promise<void> {
    await this.ip(['route', 'add', destination, 'via', via]);
  }

  async sysctl(key: string, value: string): Promise<void> {
    await this.exec(['sysctl', '-q', '-w', `${key}=${value}`]);
  }

  /** `iptables -w <args…>` in this namespace (its rules die with it). */
  async iptables(args: readonly string[]): Promise<void> {
    await this.exec(['iptables', '-w', '5', ...args]);
  }

  /** Interface names in this namespace. */
  async links(): Promise<string[]> {
    const { stdout } = await this.ip(['-o', 'link', 'show']);
    return stdout
      .split('\n')
      .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
  }

  /** IPv4 addresses in this namespace, `address/prefix` by interface. */
  async addresses(): Promise<Record<string, string[]>> {
    const { stdout } = await this.ip(['-o', '-4', 'addr', 'show']);
    const out: Record<string, string[]> = {};
    for (const line of stdout.split('\n')) {
      const m = /^\d+:\s+(\S+)\s+inet\s+(\S+)/.exec(line);
      if (m) (out[m[1]!] ??= []).push(m[2]!);
    }
    return out;
  }
}
