import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The real launcher, as a user runs it: bin/gpunet with the repository's Node and tsx.
const ROOT = join(import.meta.dirname, '..', '..', '..');
const gpunet = (args: string[], cwd = ROOT) =>
  spawnSync(join(ROOT, 'bin', 'gpunet'), args, { cwd, encoding: 'utf8', timeout: 60_000 });

describe('bin/gpunet', () => {
  it('validates docs/examples/* and exits 0, from any directory', () => {
    const files = readdirSync(join(ROOT, 'docs', 'examples')).map((f) => join(ROOT, 'docs', 'examples', f));
    const r = gpunet(['spec', 'validate', ...files], '/');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\d+ specs: \d+ valid, 0 invalid/);
  });

  it('exits 1 on a broken spec and 2 on a bad command line', () => {
    expect(gpunet(['spec', 'validate', join(ROOT, 'libs/ensemble-spec/test/fixtures/bad.yaml')]).status).toBe(
      1,
    );
    expect(gpunet(['spec', 'frobnicate']).status).toBe(2);
  });
});
