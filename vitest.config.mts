import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// Path aliases come from tsconfig.base.json so that there is exactly one list of projects.
const tsconfig = JSON.parse(readFileSync(resolve(import.meta.dirname, 'tsconfig.base.json'), 'utf8')) as {
  compilerOptions: { paths: Record<string, string[]> };
};
const alias = Object.fromEntries(
  Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => [
    name,
    resolve(import.meta.dirname, target!),
  ]),
);

/**
 * Test tiers are chosen by file suffix (STYLE.md): `*.unit.spec.ts` (pure), `*.int.spec.ts` (real NATS
 * and Postgres), `*.contract.spec.ts` (testcontainers), `*.e2e.spec.ts` (whole system).
 * Tiers that touch shared infrastructure run files one at a time per worker pool; every suite still
 * isolates itself with unique schema and stream names, so parallel projects never collide.
 */
const tier = (name: string, extra: Record<string, unknown> = {}) => ({
  resolve: { alias },
  test: {
    name,
    include: [`**/*.${name}.spec.ts`],
    exclude: ['**/node_modules/**', '**/dist/**', '.tools/**'],
    environment: 'node',
    ...extra,
  },
});

export default defineConfig({
  test: {
    projects: [
      tier('unit'),
      tier('int', { testTimeout: 60_000, hookTimeout: 60_000 }),
      tier('contract', { testTimeout: 180_000, hookTimeout: 180_000, fileParallelism: false }),
      tier('e2e', { testTimeout: 300_000, hookTimeout: 300_000, fileParallelism: false }),
    ],
  },
});
