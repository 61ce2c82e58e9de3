import { resolve } from 'node:path';

/** The repository root (where `tsconfig.json` with the `@gpunet/*` aliases lives). */
export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const SCRIPTS = resolve(import.meta.dirname, '../scripts');

/**
 * argv for one of this package's probe scripts (`udp-reflector`, `udp-probe`, `udp-echo`, `udp-rtt`,
 * `tcp-connect`, `tcp-listen`), run by the same Node as the test — inside a namespace through `Netns.spawn/exec`.
 */
export const probeScript = (name: string, args: readonly (string | number)[] = []): string[] => [
  process.execPath,
  resolve(SCRIPTS, `${name}.mjs`),
  ...args.map(String),
];

/**
 * argv of one rank of a Gloo all-reduce job (`scripts/gloo-allreduce.py`, Debian's torch): set `RANK`,
 * `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, `GLOO_SOCKET_IFNAME`, and optionally `ITERS`, `NUMEL`,
 * `PAUSE_MS`, `TIMEOUT_S` in its environment. It prints JSON lines: `ready`, `iter` (`ms`, `ok`), `done`.
 */
export const glooAllReduceArgv = (): string[] => [
  '/usr/bin/python3',
  '-u',
  resolve(SCRIPTS, 'gloo-allreduce.py'),
];

/** argv that runs a TypeScript file with tsx (aliases from the root `tsconfig.json`). */
export const tsxArgv = (file: string, args: readonly (string | number)[] = []): string[] => [
  process.execPath,
  '--import',
  'tsx',
  resolve(REPO_ROOT, file),
  ...args.map(String),
];

/** Environment for `tsxArgv` processes: the caller's, with tsx pointed at the root tsconfig. */
export const tsxEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  TSX_TSCONFIG_PATH: resolve(REPO_ROOT, 'tsconfig.json'),
  ...extra,
});
