/**
 * bench/recovery — how fast gpunet notices a failure in a running job and has every rank running
 * again: a rank SIGKILLed, a rank hung (SIGSTOP, caught by the progress timeout), a provider lost
 * (its edge and ranks SIGKILLed), `--runs` times each, p50 / p99 / max beside the goals (detect
 * < 10 s, recovered < 30 s). The measurement drives a whole dev cluster, so it lives with the cluster
 * tool (tools/cluster/bench/recovery.mts) and runs here as a child process.
 *
 *   npm run bench:recovery [-- --runs 10]        (root: network namespaces; about 6 minutes)
 *
 * Writes bench/recovery/results.json; results.md beside it keeps a run's figures.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const child = spawnSync(
  process.execPath,
  ['--import', 'tsx', resolve(root, 'tools/cluster/bench/recovery.mts'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit', timeout: 1_800_000 },
);
process.exit(child.status ?? 1);
