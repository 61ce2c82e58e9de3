import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ensembleSpecJsonSchema, parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { runCli } from '../src/app/cli';
import { fakeIo } from './fake-io';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLES = join(ROOT, 'docs', 'examples');
/** What a shell makes of `docs/examples/*`: every entry, the `jobs/` directory included. */
const examplesGlob = readdirSync(EXAMPLES)
  .sort()
  .map((f) => join(EXAMPLES, f));

const broken = [
  'apiVersion: gpunet.io/v1',
  'kind: Ensemble',
  'metadata: {name: broken}',
  'max_duration: 2h',
  'allocations:',
  '  trainer:',
  '    execution: {image: x}',
  '    resources:',
  '      cpu: {cores: 1}',
  '      ram: {size: 1GiB}',
  '      gpus: {count: 16, vram_min: 8GB}',
  '    distributed: {framework: torchrun, gpus_per_node: {max: 4}, max_nodes: 2}',
].join('\n');

const run = async (argv: string[], files: Record<string, string> = {}) => {
  const f = fakeIo(files);
  const code = await runCli(argv, f.io);
  return { code, stdout: f.stdout(), stderr: f.stderr() };
};

describe('gpunet (dispatcher)', () => {
  it('prints usage and exits 2 without arguments', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Usage: gpunet <group> <command>/);
    expect(r.stderr).toMatch(/spec +validate, explain and normalize/);
  });

  it('prints help and exits 0 with --help', async () => {
    expect((await run(['--help'])).code).toBe(0);
    const group = await run(['spec', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/validate .*\n.*explain .*\n.*normalize .*\n.*schema /);
    const cmd = await run(['spec', 'validate', '--help']);
    expect(cmd.code).toBe(0);
    expect(cmd.stdout).toMatch(/Exit status: 0 all valid, 1 some invalid/);
  });

  it('exits 2 on an unknown group, command or option', async () => {
    expect((await run(['nope'])).code).toBe(2);
    expect((await run(['spec', 'nope'])).code).toBe(2);
    const r = await run(['spec', 'validate', '--bogus', 'x.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown option '--bogus'/);
    expect((await run(['spec', 'validate'])).code).toBe(2);
    expect((await run(['spec', 'explain', 'a.yaml', 'b.yaml'])).code).toBe(2);
  });
});

describe('gpunet spec validate', () => {
  it('accepts docs/examples/* (directories are searched, scripts skipped) and exits 0', async () => {
    const r = await run(['spec', 'validate', ...examplesGlob]);
    expect(r.code).toBe(0);
    const specs = examplesGlob.filter((f) => f.endsWith('.yaml'));
    for (const f of specs) expect(r.stdout).toContain(`✓ ${f}`);
    expect(r.stdout).toContain(`${specs.length} specs: ${specs.length} valid, 0 invalid`);
    expect(r.stdout).not.toContain('ddp_train.py');
  });

  it('prints each error of a broken spec with line:column and exits 1', async () => {
    const r = await run(['spec', 'validate', 'broken.yaml', join(EXAMPLES, '01-a100x4-one-node.yaml')], {
      'broken.yaml': broken,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ broken.yaml: 2 errors');
    expect(r.stdout).toContain(
      "broken.yaml:11:25: allocations.trainer.resources.gpus.vram_min: unknown field 'vram_min' — did you mean 'min_vram'? [UNKNOWN_FIELD]",
    );
    expect(r.stdout).toMatch(
      /broken\.yaml:12:\d+: allocations\.trainer\.distributed\.max_nodes: 16 GPUs cannot fit/,
    );
    expect(r.stdout).toContain('2 specs: 1 valid, 1 invalid');
  });

  it('--json prints one machine-readable document', async () => {
    const r = await run(['spec', 'validate', '--json', 'broken.yaml'], { 'broken.yaml': broken });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(false);
    expect(report.files[0].file).toBe('broken.yaml');
    expect(report.files[0].errors[0]).toMatchObject({
      path: 'allocations.trainer.resources.gpus.vram_min',
      line: 11,
      column: 25,
      code: 'UNKNOWN_FIELD',
    });
  });

  it('--quiet prints only what is wrong', async () => {
    const ok = await run(['spec', 'validate', '--quiet', join(EXAMPLES, '01-a100x4-one-node.yaml')]);
    expect(ok).toEqual({ code: 0, stdout: '', stderr: '' });
    const bad = await run(['spec', 'validate', '-q', 'broken.yaml'], { 'broken.yaml': broken });
    expect(bad.stdout).toContain('✗ broken.yaml');
  });

  it('reports a missing file as unreadable', async () => {
    const r = await run(['spec', 'validate', 'does-not-exist.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('does-not-exist.yaml: cannot read: no such file [UNREADABLE]');
  });

  it('rejects a YAML alias bomb fast', async () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      bomb.push(
        `l${i}: &l${i} [${Array(9)
          .fill(i === 1 ? '*a' : `*l${i - 1}`)
          .join(', ')}]`,
      );
    const t0 = performance.now();
    const r = await run(['spec', 'validate', 'bomb.yaml'], { 'bomb.yaml': bomb.join('\n') });
    expect(performance.now() - t0).toBeLessThan(500);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[ALIAS_LIMIT]');
  });
});

describe('gpunet spec explain / normalize / schema', () => {
  const h100 = join(EXAMPLES, '03-h100x16-fast-fabric.yaml');

  it('explains the normalized requirement in words', async () => {
    const r = await run(['spec', 'explain', h100]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '16 GPUs, NVIDIA, model H100 or H200, ≥ 80 GB each, compute ≥ 9.0, CUDA ≥ 12.2',
    );
    expect(r.stdout).toContain('≥ 100 Gbps between nodes, < 2 ms round trip between nodes');
    expect(r.stdout).toContain('escrow up to 4492.8 USDC');
  });

  it('explains with --json: words and the normalized spec', async () => {
    const r = await run(['spec', 'explain', '--json', h100]);
    const out = JSON.parse(r.stdout);
    expect(out.spec.allocations[0].resources.gpus.count).toBe(16);
    expect(out.explanation).toContain('16 GPUs');
  });

  it('explains nothing for a broken spec, and says why', async () => {
    const r = await run(['spec', 'explain', 'broken.yaml'], { 'broken.yaml': broken });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[UNKNOWN_FIELD]');
  });

  it('normalizes to canonical YAML that parses to the same spec, or to the normalized JSON', async () => {
    const yaml = await run(['spec', 'normalize', h100]);
    expect(yaml.code).toBe(0);
    const json = await run(['spec', 'normalize', '--json', h100]);
    const again = parseEnsembleSpec(yaml.stdout);
    expect(again.ok && again.spec).toEqual(JSON.parse(json.stdout));
    expect(parse(yaml.stdout).allocations.trainer.distributed.placement).toBe('pack');
  });

  it('prints the JSON Schema', async () => {
    const r = await run(['spec', 'schema']);
    expect(JSON.parse(r.stdout)).toEqual(ensembleSpecJsonSchema());
  });
});
