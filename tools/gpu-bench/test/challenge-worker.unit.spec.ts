import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const HERE = resolve(import.meta.dirname, '..');

describe('challenge_worker.py', () => {
  it('passes its Python tests: the golden vectors of the TypeScript core at every dtype, deadlines, eviction, validation', () => {
    // Needs the interpreter with torch (Debian's python3-torch): the worker derives its inputs with torch.
    const run = spawnSync('/usr/bin/python3', ['-B', '-m', 'unittest', 'challenge_worker_test'], {
      cwd: HERE,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toMatch(/Ran 9 tests[\s\S]*\nOK\s*$/);
    expect(run.status).toBe(0);
  }, 130_000);
});
