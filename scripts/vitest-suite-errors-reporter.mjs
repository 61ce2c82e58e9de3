// A vitest reporter that writes the errors vitest's JSON reporter leaves out: those of a module or a
// describe block rather than of a test — a failed beforeAll/afterAll, a module that threw while
// loading. The JSON report shows such a file only as "failed" with an empty message (its tests as
// skipped), which is all CI's tail would show. scripts/summarize-tests.mjs prints these errors.
//
//   --reporter=./scripts/vitest-suite-errors-reporter.mjs   (output: $GPUNET_SUITE_ERRORS_FILE)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const describe = (error) => ({
  name: error?.name ?? 'Error',
  message: String(error?.message ?? error ?? ''),
  // The first frames say where; the cause chain (testcontainers wraps the engine's error) says why.
  stack: String(error?.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l) && !l.includes('/node_modules/'))
    .slice(0, 4)
    .join('\n'),
  cause: error?.cause === undefined ? undefined : describe(error.cause),
});

export default class SuiteErrorsReporter {
  onTestRunEnd(testModules, unhandledErrors) {
    const file = process.env['GPUNET_SUITE_ERRORS_FILE'];
    if (!file) return;
    const entries = [];
    for (const module of testModules) {
      for (const error of module.errors())
        entries.push({ file: module.moduleId, suite: null, error: describe(error) });
      for (const suite of module.children.allSuites())
        for (const error of suite.errors())
          entries.push({ file: module.moduleId, suite: suite.fullName, error: describe(error) });
    }
    for (const error of unhandledErrors)
      entries.push({ file: null, suite: 'unhandled', error: describe(error) });
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(entries, null, 2));
  }
}
