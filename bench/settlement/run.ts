/**
 * bench/settlement — transfers posted per second by settlement's Postgres ledger, with every
 * invariant enforced by the database, against plain INSERTs of the same rows, in the same run.
 *
 *   npm run bench:settlement [-- --jobs 600 --writers 8 --usage 4 --per-statement 0,1,3,9]
 *
 * Each phase runs in its own child process (services/settlement/bench/ledger.phases.ts, which
 * belongs to the settlement project) so that each reports its own peak RSS:
 *   baseline  the transfer rows inserted with no constraint, index, trigger or balance update
 *   ledger    the same rows through `ledger_apply`: balances checked counting pending amounts,
 *             accounts locked in id order, transfers immutable, pending resolved at most once
 * Both phases run at each statement size of `--per-statement`: 0 is one statement per step of a
 * job (fund; accrue; settle: ~8.7 transfers a statement with 4 providers), N > 0 cuts each step into
 * statements of at most N transfers (1: every transfer its own statement and transaction); the
 * table says the mean transfers per statement each run had. Prints a table and writes
 * bench/settlement/results.json. Needs Postgres (DATABASE_URL; default the local one).
 * Goal: ≥ 2,000 transfers/s for the ledger phase at one transfer per statement.
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
    'per-statement': { type: 'string', default: '0,1,3,9' },
  },
});
const sizes = values['per-statement'].split(',').map(Number);
if (sizes.some((n) => !Number.isInteger(n) || n < 0))
  throw new Error(`--per-statement: whole numbers ≥ 0 separated by commas, got ${values['per-statement']}`);
const GOAL = 2_000;

interface PhaseResult {
  phase: string;
  jobs: number;
  writers: number;
  transfers: number;
  statements: number;
  perStatement: number;
  seconds: number;
  transfersPerSecond: number;
  peakRssMb: number;
  invariants: string;
}

const root = resolve(import.meta.dirname, '../..');

const runPhase = (phase: string, perStatement: number): PhaseResult => {
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
      String(perStatement),
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 },
  );
  if (child.status !== 0) throw new Error(`phase ${phase} at ${perStatement} failed (exit ${child.status})`);
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as PhaseResult;
};

const runs = sizes.map((n) => {
  const [baseline, ledger] = ['baseline', 'ledger'].map((phase) => runPhase(phase, n)) as [
    PhaseResult,
    PhaseResult,
  ];
  return { perStatement: n, baseline, ledger };
});
const results = runs.flatMap((r) => [r.baseline, r.ledger]);
console.log(
  '\nphase      per stmt  transfers/stmt  transfers  statements  writers  seconds  transfers/s  peak RSS MB  invariants',
);
for (const r of results) {
  console.log(
    `${r.phase.padEnd(10)} ${String(r.perStatement === 0 ? 'step' : r.perStatement).padStart(8)} ${(r.transfers / r.statements).toFixed(1).padStart(15)} ` +
      `${String(r.transfers).padStart(10)} ${String(r.statements).padStart(11)} ${String(r.writers).padStart(8)} ` +
      `${r.seconds.toFixed(2).padStart(8)} ${r.transfersPerSecond.toFixed(0).padStart(12)} ${r.peakRssMb.toFixed(0).padStart(12)}  ${r.invariants}`,
  );
}
console.log('');
for (const { perStatement, baseline, ledger } of runs) {
  const goal =
    perStatement === 1
      ? `  (goal ≥ ${GOAL.toLocaleString('en')}: ${ledger.transfersPerSecond >= GOAL ? 'met' : 'NOT met'})`
      : '';
  console.log(
    `${perStatement === 0 ? 'a statement per step' : `≤ ${perStatement} per statement`}: ledger ${ledger.transfersPerSecond.toFixed(0)} transfers/s, ` +
      `${((ledger.transfersPerSecond / baseline.transfersPerSecond) * 100).toFixed(1)}% of plain INSERT; invariants ${ledger.invariants}${goal}`,
  );
}
writeFileSync(
  resolve(import.meta.dirname, 'results.json'),
  JSON.stringify({ at: new Date().toISOString(), runs }, null, 2),
);
