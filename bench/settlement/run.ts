/**
 * bench/settlement — transfers posted per second by settlement's Postgres ledger, with every
 * invariant enforced by the database, against plain INSERTs of the same rows, in the same run.
 *
 *   npm run bench:settlement [-- --jobs 600 --writers 8 --usage 4]
 *
 * Each phase runs in its own child process (services/settlement/bench/ledger.phases.ts, which
 * belongs to the settlement project) so that each reports its own peak RSS:
 *   baseline  the transfer rows inserted with no constraint, index, trigger or balance update
 *   ledger    the same rows through `ledger_apply`: balances checked counting pending amounts,
 *             accounts locked in id order, transfers immutable, pending resolved at most once
 * Prints a table and writes bench/settlement/results.json. Needs Postgres (DATABASE_URL; default
 * the local one). Goal: ≥ 2,000 transfers/s for the ledger phase.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '600' },
    writers: { type: 'string', default: '8' },
    usage: { type: 'string', default: '4' },
  },
});

interface PhaseResult {
  phase: string;
  jobs: number;
  writers: number;
  transfers: number;
  statements: number;
  seconds: number;
  transfersPerSecond: number;
  peakRssMb: number;
  invariants: string;
}

const root = resolve(import.meta.dirname, '../..');

const runPhase = (phase: string): PhaseResult => {
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      resolve(root, 'services/settlement/bench/ledger.phases.ts'),
      phase,
      values.jobs,
      values.writers,
      values.usage,
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 },
  );
  if (child.status !== 0) throw new Error(`phase ${phase} failed (exit ${child.status})`);
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as PhaseResult;
};

const results = ['baseline', 'ledger'].map(runPhase);
const [baseline, ledger] = results as [PhaseResult, PhaseResult];
console.log('\nphase       transfers  statements  writers  seconds  transfers/s  peak RSS MB  invariants');
for (const r of results) {
  console.log(
    `${r.phase.padEnd(10)} ${String(r.transfers).padStart(10)} ${String(r.statements).padStart(11)} ${String(r.writers).padStart(8)} ` +
      `${r.seconds.toFixed(2).padStart(8)} ${r.transfersPerSecond.toFixed(0).padStart(12)} ${r.peakRssMb.toFixed(0).padStart(12)}  ${r.invariants}`,
  );
}
console.log(
  `\nledger / plain INSERT: ${((ledger.transfersPerSecond / baseline.transfersPerSecond) * 100).toFixed(1)}%  ` +
    `ledger: ${ledger.transfersPerSecond.toFixed(0)} transfers/s (goal ≥ 2,000, invariants enforced by the database: ${ledger.invariants})`,
);
writeFileSync(
  resolve(import.meta.dirname, 'results.json'),
  JSON.stringify({ at: new Date().toISOString(), results }, null, 2),
);
