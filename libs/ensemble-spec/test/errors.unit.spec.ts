import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  formatSpecError,
  parseEnsembleSpec,
  parseEnsembleSpecOrThrow,
  isEnsembleSpecError,
  SPEC_ERROR_CODES,
} from '../src';
import { baseSpec, expectError, expectErrors, expectValid, specWith, trainer } from './helpers';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');

describe('positions', () => {
  const source = [
    'apiVersion: gpunet.io/v1', // 1
    'kind: Ensemble', // 2
    'metadata: {name: pos}', // 3
    'max_duration: 2h', // 4
    'allocations:', // 5
    '  trainer:', // 6
    '    execution: {image: x}', // 7
    '    resources:', // 8
    '      cpu: {cores: 1}', // 9
    '      ram: {size: 1GiB}', // 10
    '      gpus:', // 11
    '        count: 9000', // 12
    '        vram_min: 8GB', // 13
  ].join('\n');

  it('gives the line and column of a bad value', () => {
    const e = expectError(parseEnsembleSpec(source), {
      path: 'allocations.trainer.resources.gpus.count',
      code: 'OUT_OF_RANGE',
    });
    expect([e.line, e.column]).toEqual([12, 16]);
  });

  it('gives the position of an unknown key, not of its value', () => {
    const e = expectError(parseEnsembleSpec(source), {
      path: 'allocations.trainer.resources.gpus.vram_min',
      code: 'UNKNOWN_FIELD',
    });
    expect([e.line, e.column]).toEqual([13, 9]);
  });

  it('points a missing field at the map that lacks it', () => {
    const r = parseEnsembleSpec(source.replace('    execution: {image: x}\n', ''));
    const e = expectError(r, { path: 'allocations.trainer.execution', code: 'MISSING_FIELD' });
    expect(e.line).toBe(7); // the allocation's first line after `trainer:`
  });

  it('locates errors inside lists and flow maps', () => {
    const r = parseEnsembleSpec(
      `${source.replace('count: 9000', 'count: 4').replace('        vram_min: 8GB\n', '')}\n    ports:\n      - {private: 80}\n      - {private: 70000}\n`,
    );
    const e = expectError(r, { path: 'allocations.trainer.ports[1].private', code: 'OUT_OF_RANGE' });
    expect([e.line, e.column]).toEqual([16, 19]);
  });

  it('reports every error at once, in source order, with reasons', () => {
    const errors = expectErrors(parseEnsembleSpec(fixture('bad.yaml'), { filename: 'bad.yaml' }));
    expect(errors.length).toBeGreaterThanOrEqual(15);
    const lines = errors.map((e) => e.line ?? 0);
    expect([...lines].sort((a, b) => a - b)).toEqual(lines);
    for (const e of errors) {
      expect(e.path).not.toBe('');
      expect(e.line).toBeGreaterThan(0);
      expect(e.column).toBeGreaterThan(0);
      expect(e.message.length).toBeGreaterThan(10);
      expect(SPEC_ERROR_CODES).toContain(e.code);
    }
    expect(errors.map((e) => e.code)).toEqual(
      expect.arrayContaining([
        'UNSUPPORTED_VERSION',
        'UNKNOWN_FIELD',
        'INVALID_VALUE',
        'INVALID_TYPE',
        'OUT_OF_RANGE',
        'UNSATISFIABLE',
        'UNKNOWN_REFERENCE',
      ]),
    );
  });

  it('formats errors as file:line:column: path: message [CODE]', () => {
    const errors = expectErrors(parseEnsembleSpec(fixture('bad.yaml')));
    const vram = errors.find((e) => e.path.endsWith('vram_min'))!;
    expect(formatSpecError(vram, 'bad.yaml')).toBe(
      "bad.yaml:18:9: allocations.trainer.resources.gpus.vram_min: unknown field 'vram_min' — did you mean 'min_vram'? [UNKNOWN_FIELD]",
    );
  });

  it('locates fields reached through a YAML merge key', () => {
    const r = parseEnsembleSpec(
      [
        'apiVersion: gpunet.io/v1',
        'kind: Ensemble',
        'metadata: {name: merge}',
        'max_duration: 1h',
        'base: &base',
        '  execution: {image: x}',
        'allocations:',
        '  a:',
        '    <<: *base',
        '    resources: {cpu: {cores: 1}, ram: {size: 1GB}}',
      ].join('\n'),
    );
    // `base` is not a field; the merged allocation itself is fine.
    const errors = expectErrors(r);
    expect(errors.map((e) => [e.path, e.code])).toEqual([['base', 'UNKNOWN_FIELD']]);
    expect(errors[0]?.line).toBe(5);
  });
});

describe('documents that are not specs', () => {
  it.each([
    ['empty', '', 'MISSING_FIELD'],
    ['a comment only', '# nothing\n', 'MISSING_FIELD'],
    ['a scalar', 'hello', 'INVALID_TYPE'],
    ['a list', '- a\n- b\n', 'INVALID_TYPE'],
    ['broken flow', 'a: [1, 2\n', 'SYNTAX'],
    ['bad indentation', 'a:\n  b: 1\n c: 2\n', 'SYNTAX'],
    ['a duplicate key', 'kind: Ensemble\nkind: Ensemble\n', 'SYNTAX'],
    ['two documents', 'a: 1\n---\nb: 2\n', 'MULTIPLE_DOCUMENTS'],
    ['a tab indent', 'a:\n\tb: 1\n', 'SYNTAX'],
  ])('%s', (_, source, code) => {
    const errors = expectErrors(parseEnsembleSpec(source));
    expect(errors[0]?.code).toBe(code);
    expect(errors[0]?.message).not.toBe('');
  });

  it('gives the position of a syntax error', () => {
    const errors = expectErrors(
      parseEnsembleSpec('apiVersion: gpunet.io/v1\nkind: Ensemble\nkind: Ensemble\n'),
    );
    expect(errors[0]).toMatchObject({
      code: 'SYNTAX',
      line: 3,
      column: 1,
      message: 'a key appears twice in the same map',
    });
  });

  it('never throws, whatever it is given', () => {
    for (const input of [
      undefined,
      null,
      42,
      {},
      [],
      '\u0000',
      '\uFFFF'.repeat(10),
      '{{{{',
      '!!binary x',
      '&a [*a]',
      '*unknown',
    ]) {
      const r = parseEnsembleSpec(input as string);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors.every((e) => e.code !== 'INTERNAL')).toBe(true);
    }
  });

  it('refuses a self-referencing alias without recursing forever', () => {
    const errors = expectErrors(parseEnsembleSpec('a: &x [1, *x]\n'));
    expect(['TOO_DEEP', 'SYNTAX', 'ALIAS_LIMIT']).toContain(errors[0]?.code);
  });

  it('treats __proto__ as an unknown field, not as a prototype', () => {
    const r = parseEnsembleSpec(`${stringify(baseSpec())}__proto__: {polluted: true}\n`);
    expectError(r, { path: '__proto__', code: 'UNKNOWN_FIELD' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('surfaces YAML warnings (unknown tags) as warnings', () => {
    const source = stringify(baseSpec()).replace('name: base', 'name: !custom base');
    const r = parseEnsembleSpec(source);
    expectValid(r);
    expect(r.warnings.map((w) => w.message).join()).toMatch(/tag/i);
  });
});

describe('JSON', () => {
  it('reads JSON by extension or option, with positions', () => {
    const json = JSON.stringify(baseSpec(), null, 2);
    expect(parseEnsembleSpec(json, { filename: 'job.json' }).ok).toBe(true);
    expect(parseEnsembleSpec(json, { format: 'json' }).ok).toBe(true);
    const bad = JSON.stringify(
      specWith((s) => (trainer(s).resources.gpus.count = 0)),
      null,
      2,
    );
    const e = expectError(parseEnsembleSpec(bad, { format: 'json' }), {
      path: 'allocations.trainer.resources.gpus.count',
      code: 'OUT_OF_RANGE',
    });
    expect(e.line).toBeGreaterThan(1);
  });

  it('rejects YAML-only syntax in JSON mode', () => {
    expect(parseEnsembleSpec('apiVersion: gpunet.io/v1\n', { format: 'json' }).ok).toBe(false);
  });
});

describe('limits', () => {
  it('rejects a document over maxBytes before parsing it', () => {
    const big = `# ${'x'.repeat(1024 * 1024)}\n`;
    const errors = expectErrors(parseEnsembleSpec(big));
    expect(errors).toEqual([expect.objectContaining({ code: 'DOCUMENT_TOO_LARGE', path: '' })]);
  });

  it('counts bytes, not characters', () => {
    const errors = expectErrors(parseEnsembleSpec(`# ${'€'.repeat(400)}\n`, { limits: { maxBytes: 1000 } }));
    expect(errors[0]?.code).toBe('DOCUMENT_TOO_LARGE');
  });

  it('rejects deep flow nesting fast, before the parser', () => {
    const deep = `a: ${'['.repeat(400_000)}${']'.repeat(400_000)}`;
    const t0 = performance.now();
    const errors = expectErrors(parseEnsembleSpec(deep));
    expect(errors[0]).toMatchObject({ code: 'TOO_DEEP', line: 1 });
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('rejects deep block nesting', () => {
    const deep = Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
    expect(expectErrors(parseEnsembleSpec(deep))[0]?.code).toBe('TOO_DEEP');
    const dashes = `a:\n${'- '.repeat(50)}x\n`;
    expect(expectErrors(parseEnsembleSpec(dashes))[0]?.code).toBe('TOO_DEEP');
  });

  it('rejects a YAML alias bomb fast', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 12; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const t0 = performance.now();
    const errors = expectErrors(parseEnsembleSpec(levels.join('\n')));
    const ms = performance.now() - t0;
    expect(errors).toEqual([expect.objectContaining({ code: 'ALIAS_LIMIT', path: '' })]);
    expect(ms).toBeLessThan(200);
  });

  it('allows a few aliases (reusing an execution block)', () => {
    const source = stringify(baseSpec()).replace('execution:', 'execution: &exec');
    expectValid(parseEnsembleSpec(`${source}`));
  });

  it('applies stricter limits a caller passes', () => {
    const r = parseEnsembleSpec(stringify(baseSpec()), { limits: { maxGpusPerJob: 2 } });
    expectError(r, { path: 'allocations', code: 'LIMIT_EXCEEDED', message: /limit is 2/ });
    const many = specWith((s) => {
      for (let i = 0; i < 5; i++)
        s.allocations[`s${i}`] = {
          execution: { image: 'x' },
          resources: { cpu: { cores: 1 }, ram: { size: '1GB' } },
        };
    });
    expectError(parseEnsembleSpec(stringify(many), { limits: { maxAllocations: 3 } }), {
      path: 'allocations',
      code: 'LIMIT_EXCEEDED',
    });
  });

  it('stops listing errors at maxErrors and says how many were left out', () => {
    const s = specWith((spec) => {
      for (let i = 0; i < 30; i++) spec[`unknown${i}`] = i;
    });
    const errors = expectErrors(parseEnsembleSpec(stringify(s), { limits: { maxErrors: 10 } }));
    expect(errors).toHaveLength(11);
    expect(errors[10]).toMatchObject({ code: 'TOO_MANY_ERRORS', message: '20 more errors not shown' });
  });
});

describe('parseEnsembleSpecOrThrow', () => {
  it('returns the spec or throws an EnsembleSpecError with every error', () => {
    expect(parseEnsembleSpecOrThrow(stringify(baseSpec())).metadata.name).toBe('base');
    try {
      parseEnsembleSpecOrThrow(fixture('bad.yaml'));
      expect.fail('expected a throw');
    } catch (e) {
      expect(isEnsembleSpecError(e)).toBe(true);
      if (isEnsembleSpecError(e)) {
        expect(e.code).toBe('INVALID_ENSEMBLE_SPEC');
        expect(e.errors.length).toBeGreaterThan(10);
      }
    }
  });
});
