// @ts-check
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Node's builtin modules: deterministic domain code may use none of them (STYLE.md, Temporal). */
const nodeBuiltins = [
  'assert',
  'async_hooks',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

/** Infrastructure that must never appear in domain code: frameworks, persistence, transport, telemetry. */
export const domainForbiddenImports = {
  paths: nodeBuiltins.map((name) => ({ name, message: 'Domain code is pure: no Node builtins.' })),
  patterns: [
    { group: ['node:*'], message: 'Domain code is pure: no Node builtins.' },
    { group: ['@nestjs/*'], message: 'Domain code is pure: no NestJS (put it in app/).' },
    {
      group: ['typeorm', 'typeorm/*', 'pg', 'pg-*'],
      message: 'Domain code is pure: no persistence (put it in infra/).',
    },
    { group: ['@nats-io/*', 'nats'], message: 'Domain code is pure: no NATS (put it in infra/).' },
    {
      group: ['@opentelemetry/*', '@gpunet/telemetry', 'pino', 'prom-client'],
      message: 'Domain code is pure: no telemetry.',
    },
    {
      group: ['@gpunet/eventing', '@gpunet/testing'],
      message: 'Domain code is pure: no eventing infrastructure.',
    },
  ],
};

/** Files whose code must be deterministic: service domains and pure libraries. */
export const domainFiles = [
  'services/*/src/domain/**/*.ts',
  'libs/*/src/domain/**/*.ts',
  // A real type:service project whose domain folder tools/lint-fixtures/lint.unit.spec.ts lints fixtures in.
  'tools/lint-fixtures/probe-service/src/domain/**/*.ts',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.tools/**',
      'reports/**',
      '.nx/**',
      'tmp/**',
      // Lint fixtures are deliberately wrong; tools/lint-fixtures/lint.unit.spec.ts lints them on purpose.
      'tools/lint-fixtures/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.mjs', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@nx': nx, 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'no-console': 'error',
      eqeqeq: ['error', 'smart'],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          banTransitiveDependencies: false,
          depConstraints: [
            // A service uses libraries, never another service's code (it talks to it over NATS).
            { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib', 'type:testing'] },
            // Shared libraries stay generic: they never depend on a service's scope.
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['scripts/**', 'bench/**', 'tools/**', '**/*.spec.ts', '**/test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: {
      // Tests assert on loosely typed JSON and mock shapes; keep the strict rules for product code.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Awaiters take async probes that may not await anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: domainFiles,
    rules: {
      'no-restricted-imports': ['error', domainForbiddenImports],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Domain code is pure: configuration comes in as arguments.' },
        { name: 'setTimeout', message: 'Domain code is pure: time comes in as data.' },
        { name: 'setInterval', message: 'Domain code is pure: time comes in as data.' },
        { name: 'Buffer', message: 'Domain code is pure: no Node builtins.' },
        { name: 'fetch', message: 'Domain code is pure: no I/O.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Domain code is deterministic: take the time as input.' },
        {
          object: 'Math',
          property: 'random',
          message: 'Domain code is deterministic: take a seeded RNG as input.',
        },
        { object: 'crypto', property: 'randomUUID', message: 'Domain code is deterministic: ids come in.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Domain code is deterministic: `new Date()` reads the clock; take the time as input.',
        },
      ],
    },
  },
  prettier,
);
