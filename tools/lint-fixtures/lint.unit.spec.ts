// Lints the fixtures in ./fixtures with the repository's real ESLint config, as if each lived at a
// path inside a real Nx project, and checks that the boundary and domain-purity rules report exactly
// where they should. This unit-tier file does I/O (it reads the config, the project graph and the
// TypeScript program) because that is what linting is; it touches no network and no shared service.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
/** A real Nx project tagged type:service, whose src/domain/ is in eslint.config.mjs `domainFiles`. */
const probeRoot = 'tools/lint-fixtures/probe-service';
const probe = `${probeRoot}/src`;
const BOUNDARIES = '@nx/enforce-module-boundaries';
const TIMEOUT = 120_000;

/** The nx CLI of this workspace, found through its package.json so a moved bin file does not break it. */
function nxBin(): string {
  const require = createRequire(join(root, 'package.json'));
  const pkgPath = require.resolve('nx/package.json');
  const { bin } = JSON.parse(readFileSync(pkgPath, 'utf8')) as { bin: { nx: string } };
  return join(pkgPath, '..', bin.nx);
}

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');

let eslint: ESLint;

/** Lints `code` as the file at `path` (relative to the repository root) and returns its messages. */
async function lintAs(code: string, path: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, path) });
  if (!result) throw new Error(`no lint result for ${path}`);
  return result.messages;
}

const summary = (messages: Linter.LintMessage[]) =>
  messages.map((m) => ({ ruleId: m.ruleId, messageId: m.messageId, line: m.line, severity: m.severity }));

beforeAll(() => {
  // @nx/enforce-module-boundaries reads the *cached* project graph and silently skips itself when
  // there is none. Computing the graph here writes that cache; the boundary tests below then assert
  // that the rule really reported, so a skipped rule fails them instead of passing them.
  const projects = JSON.parse(
    execFileSync(process.execPath, [nxBin(), 'show', 'projects', '--json'], {
      cwd: root,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' },
      encoding: 'utf8',
    }),
  ) as string[];
  expect(projects).toEqual(
    expect.arrayContaining(['lint-probe-service', 'lint-probe-other-service', 'contracts']),
  );
  eslint = new ESLint({
    cwd: root,
    // The fixtures are linted at paths where no file exists, and the TypeScript project service only
    // knows files on disk. Files named *.fixture.ts in the probe service get a default project built
    // from tools/lint-fixtures/tsconfig.json instead, so type-aware rules still run on them. The
    // first two globs repeat the root config's own list, which this option replaces.
    overrideConfig: {
      languageOptions: {
        parserOptions: {
          projectService: {
            allowDefaultProject: [
              '*.mjs',
              'scripts/*.mjs',
              `${probeRoot}/*.fixture.ts`,
              `${probe}/*/*.fixture.ts`,
            ],
            defaultProject: 'tools/lint-fixtures/tsconfig.json',
          },
        },
      },
    },
  });
}, TIMEOUT);

describe('domain purity', () => {
  it(
    'reports every infrastructure import and every clock or randomness read in a service domain',
    async () => {
      const messages = await lintAs(fixture('domain-impure.ts'), `${probe}/domain/impure.fixture.ts`);
      expect(summary(messages)).toEqual([
        { ruleId: 'no-restricted-imports', messageId: 'pathWithCustomMessage', line: 3, severity: 2 },
        { ruleId: 'no-restricted-imports', messageId: 'patternWithCustomMessage', line: 4, severity: 2 },
        { ruleId: 'no-restricted-imports', messageId: 'patternWithCustomMessage', line: 5, severity: 2 },
        { ruleId: 'no-restricted-imports', messageId: 'patternWithCustomMessage', line: 6, severity: 2 },
        { ruleId: 'no-restricted-properties', messageId: 'restrictedObjectProperty', line: 8, severity: 2 },
        { ruleId: 'no-restricted-properties', messageId: 'restrictedObjectProperty', line: 9, severity: 2 },
        { ruleId: 'no-restricted-syntax', messageId: 'restrictedSyntax', line: 10, severity: 2 },
      ]);
      expect(messages.map((m) => m.message)).toEqual([
        expect.stringMatching(/'events'.*no Node builtins/),
        expect.stringMatching(/'node:fs'.*no Node builtins/),
        expect.stringMatching(/'@nestjs\/common'.*no NestJS/),
        expect.stringMatching(/'typeorm'.*no persistence/),
        expect.stringMatching(/Date\.now.*take the time as input/),
        expect.stringMatching(/Math\.random.*seeded RNG/),
        expect.stringMatching(/`new Date\(\)` reads the clock/),
      ]);
    },
    TIMEOUT,
  );

  it(
    'allows the same code outside the domain folder',
    async () => {
      expect(summary(await lintAs(fixture('domain-impure.ts'), `${probe}/infra/impure.fixture.ts`))).toEqual(
        [],
      );
    },
    TIMEOUT,
  );

  it(
    'leaves the probe’s real, pure domain file clean',
    async () => {
      const path = `${probe}/domain/probe.decider.ts`;
      expect(summary(await lintAs(readFileSync(join(root, path), 'utf8'), path))).toEqual([]);
    },
    TIMEOUT,
  );
});

describe('module boundaries', () => {
  it(
    'reports a relative import of another project’s internals',
    async () => {
      const messages = await lintAs(fixture('relative-cross-project.ts'), `${probeRoot}/registry.fixture.ts`);
      expect(summary(messages)).toEqual([
        { ruleId: BOUNDARIES, messageId: 'noRelativeOrAbsoluteImportsAcrossLibraries', line: 3, severity: 2 },
      ]);
    },
    TIMEOUT,
  );

  it(
    'allows a library through its public alias',
    async () => {
      expect(
        summary(await lintAs(fixture('alias-library-import.ts'), `${probeRoot}/registry.fixture.ts`)),
      ).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'reports a type:service that imports another type:service',
    async () => {
      const messages = await lintAs(fixture('service-imports-service.ts'), `${probe}/app/quota.fixture.ts`);
      expect(summary(messages)).toEqual([
        { ruleId: BOUNDARIES, messageId: 'onlyTagsConstraintViolation', line: 2, severity: 2 },
      ]);
      expect(messages[0]?.message).toBe(
        'A project tagged with "type:service" can only depend on libs tagged with "type:lib", "type:testing"',
      );
    },
    TIMEOUT,
  );
});
