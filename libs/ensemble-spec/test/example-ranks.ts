import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseEnsembleSpec, type Allocation } from '../src';
import { expectValid } from './helpers';

/**
 * Runs the example jobs of docs/examples for real, the way a process runtime would: one process per
 * rank from the normalized spec's cmd and env, with the environment gpunet sets, on 127.0.0.1.
 * Shared by the *-example.int.spec.ts files.
 */
export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const PYTHON = '/usr/bin/python3';

/** CI installs the example jobs' Debian packages (scripts/ensure-services.sh): missing ones fail there. */
export const underCi = (): boolean => {
  const ci = process.env['CI'] ?? '';
  return ci !== '' && ci !== 'false' && ci !== '0';
};

/** Whether /usr/bin/python3 imports every module (torch's import alone takes seconds on a busy box). */
export const pythonImports = (...modules: string[]): boolean =>
  spawnSync(PYTHON, ['-c', modules.map((m) => `import ${m}`).join('; ')], { timeout: 120_000 }).status === 0;

export const commandRuns = (command: string, ...args: string[]): boolean =>
  spawnSync(command, args, { timeout: 60_000 }).status === 0;

/**
 * `available` when the dependency is there; else a skip, except under CI, where it throws so that
 * the suite fails loudly instead of passing without having run.
 */
export const requireOrSkip = (available: boolean, what: string, install: string): boolean => {
  if (!available && underCi())
    throw new Error(
      `${what} is missing under CI: run scripts/ensure-services.sh (apt-get install ${install})`,
    );
  return available;
};

/** The spec's only allocation, parsed and normalized by the library as the scheduler would. */
export const loadExample = (file: string): Allocation => {
  const spec = expectValid(parseEnsembleSpec(readFileSync(join(ROOT, 'docs/examples', file), 'utf8')));
  return spec.allocations[0]!;
};

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout's JSON lines (the jobs print one per event); other lines are left in stdout. */
  lines: Record<string, unknown>[];
  stdout: string;
  stderr: string;
}

export interface Launch {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
}

/** Never outlive the test: a process stuck in rendezvous is killed, and the test fails on it. */
const PROCESS_TIMEOUT_MS = 150_000;

export const runProcess = ({ command, args, env }: Launch): Promise<ProcessResult> =>
  new Promise((resolve) => {
    const child = spawn(command, [...args], {
      cwd: ROOT,
      timeout: PROCESS_TIMEOUT_MS,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => (err += `\nspawn failed: ${e.message}`));
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: out,
        stderr: err,
        lines: out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      }),
    );
  });

/**
 * What gpunet gives rank `rank` of allocation `a` on one host (loopback), on top of the spec's env.
 * Loopback only: Gloo otherwise picks the address the hostname resolves to, which on a host with
 * bridges (docker0) need not be reachable.
 */
export const gpunetRankEnv = (a: Allocation, rank: number, port: number): Record<string, string> => ({
  ...a.execution.env,
  RANK: String(rank),
  WORLD_SIZE: String(a.ranks),
  LOCAL_RANK: String(rank),
  LOCAL_WORLD_SIZE: String(a.ranks),
  NODE_RANK: '0',
  MASTER_ADDR: '127.0.0.1',
  MASTER_PORT: String(port),
  GLOO_SOCKET_IFNAME: 'lo',
  NCCL_SOCKET_IFNAME: 'lo',
  CUDA_VISIBLE_DEVICES: '',
  GPUNET_RENDEZVOUS_TIMEOUT_S: '90',
});

/** The spec's cmd split into the command and its arguments. */
export const cmdOf = (a: Allocation): { command: string; args: string[] } => {
  const [command, ...args] = a.execution.cmd as [string, ...string[]];
  return { command, args };
};

const inUse = (results: readonly ProcessResult[]): boolean =>
  results.some((r) => /address already in use/i.test(r.stderr));

/**
 * Runs `launch(port)` on a free port. The spec's rendezvous_port may be busy on a shared CI host, and
 * a free port can be taken again before rank 0 binds it: pick another and retry when that happened.
 */
export const onFreePort = async (
  launch: (port: number) => Promise<ProcessResult[]>,
): Promise<ProcessResult[]> => {
  let results = await launch(await freePort());
  for (let attempt = 1; attempt < 3 && inUse(results); attempt++) results = await launch(await freePort());
  return results;
};

/** One process per rank, gpunet's way: all of `a.ranks` at once, each with `envOf(rank, port)`. */
export const runRanks = (
  a: Allocation,
  envOf: (rank: number, port: number) => Record<string, string>,
): Promise<ProcessResult[]> =>
  onFreePort((port) =>
    Promise.all(
      Array.from({ length: a.ranks }, (_, rank) => runProcess({ ...cmdOf(a), env: envOf(rank, port) })),
    ),
  );

/** The JSON lines of one event, optionally of one rank. */
export const events = (r: ProcessResult, event: string, rank?: number): Record<string, unknown>[] =>
  r.lines.filter((l) => l['event'] === event && (rank === undefined || l['rank'] === rank));

/** A failure message that shows what the process said. */
export const said = (r: ProcessResult): string =>
  `exit ${r.code} (signal ${r.signal})\n--- stderr ---\n${r.stderr.slice(-4000)}\n--- stdout ---\n${r.stdout.slice(-2000)}`;
