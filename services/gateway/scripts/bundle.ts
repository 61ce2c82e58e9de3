import { resolve } from 'node:path';
import { build } from 'esbuild';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

/** Where `bundleGateway` writes by default (`dist/` is not tracked). */
export const GATEWAY_BUNDLE = resolve(REPO_ROOT, 'dist/services/gateway/main.mjs');

/**
 * Bundles the gateway the way it runs in production (ADR 0002): one ES module of the gateway and
 * the workspace libraries, compiled by esbuild and run by plain `node` — no tsx, so no TypeScript
 * compiler and no source-map support in the serving process (tsx turns source maps on, which makes
 * every captured `Error` stack costly). Packages under `node_modules` stay imports (the image ships
 * `node_modules` beside `dist/`); Nest's optional peers are loaded only when used.
 * A source map is written beside the bundle for `node --enable-source-maps` when debugging.
 */
export const bundleGateway = async (outfile: string = GATEWAY_BUNDLE): Promise<string> => {
  await build({
    entryPoints: [resolve(REPO_ROOT, 'services/gateway/src/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    packages: 'external',
    tsconfig: resolve(REPO_ROOT, 'tsconfig.json'),
    sourcemap: true,
    logLevel: 'warning',
  });
  return outfile;
};

/* Run: npx tsx services/gateway/scripts/bundle.ts [outfile], then `node dist/services/gateway/main.mjs`. */
if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  void bundleGateway(process.argv[2] === undefined ? undefined : resolve(process.argv[2])).then((file) => {
    process.stdout.write(`wrote ${file}\n`);
  });
}
