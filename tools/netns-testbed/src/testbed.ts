import { randomBytes } from 'node:crypto';
import { run } from './command';
import { Netns } from './netns';
import { type TestProcess } from './process';

/** Every testbed namespace starts with this, then the creator's pid (base 36) and a random tag. */
export const TESTBED_PREFIX = 'gpo';
const NAME = /^gpo-([0-9a-z]+)-[0-9a-z]+-/;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Namespaces on this machine, by name. */
export const listNamespaces = async (): Promise<string[]> => {
  const { stdout } = await run(['ip', 'netns', 'list']);
  return stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name !== '');
};

/** Kills what still runs inside a namespace (by pid) and deletes it; its links and iptables rules go with it. */
const deleteNamespace = async (name: string): Promise<void> => {
  const pids = await run(['ip', 'netns', 'pids', name], { allowFailure: true });
  for (const pid of pids.stdout
    .split('\n')
    .map(Number)
    .filter((p) => p > 0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await run(['ip', 'netns', 'del', name], { allowFailure: true });
};

/**
 * Removes namespaces left by testbeds whose process died before `destroy()` (a crashed or killed
 * test run). Only names this module makes are touched, and only when their creator is gone.
 */
export const sweepStaleTestbeds = async (): Promise<string[]> => {
  const stale = (await listNamespaces()).filter((name) => {
    const m = NAME.exec(name);
    return m !== null && !alive(parseInt(m[1]!, 36));
  });
  for (const name of stale) await deleteNamespace(name);
  return stale;
};

/**
 * A set of network namespaces, links and processes on this machine, all removed by `destroy()`
 * (call it in `afterAll`, also after a failure). Names are unique per testbed, so suites run side by
 * side; nothing is created in the machine's own namespace.
 *
 * ```ts
 * const tb = await Testbed.create('direct');
 * const a = await tb.namespace('a');
 * const b = await tb.namespace('b');
 * await tb.link(a, 'eth0', b, 'eth0');
 * await a.addAddress('eth0', '10.0.0.1/24');
 * // …
 * await tb.destroy();
 * ```
 */
export class Testbed {
  readonly #namespaces: Netns[] = [];
  readonly #processes: TestProcess[] = [];
  #destroyed = false;

  private constructor(
    /** `gpo-<pid36>-<tag>`: the start of every namespace name of this testbed. */
    readonly prefix: string,
    readonly label: string,
  ) {}

  /** A new, empty testbed; first sweeps namespaces of dead testbeds. */
  static async create(label = 'tb'): Promise<Testbed> {
    await sweepStaleTestbeds();
    const tag = randomBytes(3).toString('hex');
    return new Testbed(`${TESTBED_PREFIX}-${process.pid.toString(36)}-${tag}`, label);
  }

  get namespaces(): readonly Netns[] {
    return this.#namespaces;
  }

  /** Creates the namespace `<prefix>-<name>` with `lo` up. */
  async namespace(name: string): Promise<Netns> {
    if (this.#destroyed) throw new Error(`testbed ${this.prefix} is destroyed`);
    const full = `${this.prefix}-${name}`;
    await run(['ip', 'netns', 'add', full]);
    const ns = new Netns(full, { register: (p) => this.#processes.push(p) });
    this.#namespaces.push(ns);
    await ns.up('lo');
    return ns;
  }

  /** A veth pair between two namespaces (created directly inside them), both ends up. */
  async link(a: Netns, aIf: string, b: Netns, bIf: string): Promise<void> {
    await run([
      'ip',
      'link',
      'add',
      aIf,
      'netns',
      a.name,
      'type',
      'veth',
      'peer',
      'name',
      bIf,
      'netns',
      b.name,
    ]);
    await a.up(aIf);
    await b.up(bIf);
  }

  /** A bridge inside `ns`, up. */
  async bridge(ns: Netns, name: string): Promise<void> {
    await ns.ip(['link', 'add', name, 'type', 'bridge']);
    await ns.up(name);
  }

  /** Plugs a veth end of `ns` into its bridge. */
  async attach(ns: Netns, ifname: string, bridge: string): Promise<void> {
    await ns.ip(['link', 'set', ifname, 'master', bridge]);
  }

  /** Processes started through this testbed's namespaces. */
  get processes(): readonly TestProcess[] {
    return this.#processes;
  }

  /**
   * Stops every process (SIGTERM, then SIGKILL), kills whatever else still runs in the namespaces and
   * deletes them. Idempotent; never throws for something already gone.
   */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    await Promise.all(this.#processes.map((p) => p.stop(2_000)));
    for (const ns of this.#namespaces.splice(0).reverse()) await deleteNamespace(ns.name);
  }
}
