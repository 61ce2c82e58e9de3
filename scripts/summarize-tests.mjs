#!/usr/bin/env node
// Adds up every vitest JSON report under reports/ and prints the closing line CI reads:
// "N passed, N failed" (", N skipped" when some were skipped).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? 'reports';
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
// CI shows only the end of the log: each failure carries the start of its message, so that the
// cause is readable there (ANSI colours stripped, a few lines, bounded).
const excerpt = (message) =>
  String(message)
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 14)
    .join('\n      ')
    .slice(0, 2400);
// Errors of describe blocks and modules (vitest-suite-errors-reporter.mjs), by file.
const suiteErrors = new Map();
const collectSuiteErrors = (dir) => {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collectSuiteErrors(path);
    else if (entry.endsWith('.suite-errors'))
      for (const e of JSON.parse(readFileSync(path, 'utf8'))) {
        const chain = [];
        for (let err = e.error; err !== undefined && chain.length < 4; err = err.cause)
          chain.push(`${String(err.name).replace(/^Caused by: /, '')}: ${err.message}`);
        const text = `${e.suite ?? '(module)'}: ${chain.join('\n      caused by ')}\n${e.error.stack}`;
        suiteErrors.set(e.file, [...(suiteErrors.get(e.file) ?? []), text]);
      }
  }
};
collectSuiteErrors(root);
const walk = (dir) => {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (entry.endsWith('.json')) {
      const report = JSON.parse(readFileSync(path, 'utf8'));
      passed += report.numPassedTests ?? 0;
      failed += report.numFailedTests ?? 0;
      skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
      // A suite that failed to load has no failed tests but did fail.
      for (const suite of report.testResults ?? []) {
        if (suite.status === 'failed' && (suite.assertionResults ?? []).every((a) => a.status !== 'failed')) {
          failed += 1;
          const why = [suite.message, ...(suiteErrors.get(suite.name) ?? [])].filter(Boolean).join('\n');
          failures.push(`${suite.name}: ${excerpt(why || 'suite failed')}`);
        }
        for (const a of suite.assertionResults ?? []) {
          if (a.status === 'failed')
            failures.push(
              `${suite.name} › ${a.fullName}\n      ${excerpt((a.failureMessages ?? []).join('\n'))}`,
            );
        }
      }
    }
  }
};
walk(root);
// argv: <reports dir> <lint/typecheck failed 0|1> <a tier step failed 0|1>
const checksFailed = Number(process.argv[3] ?? 0);
const tierStepFailed = Number(process.argv[4] ?? 0);
if (checksFailed > 0) failures.push('lint or typecheck');
failed += checksFailed;
// A tier that failed without any failed test in its reports crashed before reporting: count it.
if (tierStepFailed > 0 && failed - checksFailed === 0) {
  failures.push('a test runner failed without reporting a failed test');
  failed += 1;
}
if (failures.length > 0) {
  console.log('\nFailed:');
  for (const f of failures) console.log(`  ✗ ${f}`);
}
console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed > 0 ? 1 : 0;
