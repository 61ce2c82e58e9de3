#!/usr/bin/env node
// Runs one test tier of one Nx project and writes a JSON report that scripts/summarize-tests.mjs
// adds up into the closing "N passed, N failed" line. A project without tests of this tier passes.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [tier, project, root] = process.argv.slice(2);
if (!tier || !project || !root) {
  console.error('usage: vitest-tier.mjs <tier> <project> <projectRoot>');
  process.exit(2);
}
const reportDir = join('reports', tier);
mkdirSync(reportDir, { recursive: true });
const args = [
  'vitest',
  'run',
  '--project',
  tier,
  // A path filter (not --dir, which the workspace's projects override): only this project's files.
  `${root.replace(/\/$/, '')}/`,
  '--passWithNoTests',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${join(reportDir, `${project}.json`)}`,
  // Errors of a describe block or module (a failed beforeAll), which the JSON report leaves out.
  '--reporter=./scripts/vitest-suite-errors-reporter.mjs',
];
const result = spawnSync('npx', args, {
  stdio: 'inherit',
  env: { ...process.env, GPUNET_SUITE_ERRORS_FILE: join(reportDir, `${project}.suite-errors`) },
});
process.exit(result.status ?? 1);
