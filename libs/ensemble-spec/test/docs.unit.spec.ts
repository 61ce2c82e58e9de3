import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { ensembleSpecJsonSchema, explainEnsembleSpec, formatSpecError, parseEnsembleSpec } from '../src';
import { DOC_FILE, findRepoRoot, renderDoc, renderSchemaFile, SCHEMA_FILE } from '../scripts/docs';
import { expectErrors, expectValid } from './helpers';

const root = findRepoRoot(import.meta.dirname);
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const REGENERATE = 'run `npx tsx libs/ensemble-spec/scripts/generate-docs.ts`';

describe('published JSON Schema', () => {
  it(`is ${SCHEMA_FILE}, generated from the validator (else ${REGENERATE})`, () => {
    expect(read(SCHEMA_FILE)).toBe(renderSchemaFile());
  });

  const ajv = new Ajv({ strict: true, allErrors: true });
  const validate = ajv.compile(ensembleSpecJsonSchema());
  const examples = readdirSync(join(root, 'docs/examples')).filter((f) => f.endsWith('.yaml'));

  it.each(examples)('accepts %s, as an editor would', (f) => {
    const ok = validate(parse(read(`docs/examples/${f}`)));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('rejects what the parser rejects field by field (a typo, a bare size, a bad enum)', () => {
    const doc = parse(read('docs/examples/01-a100x4-one-node.yaml')) as {
      allocations: { trainer: { resources: Record<string, unknown> } };
    };
    const gpus = doc.allocations.trainer.resources.gpus as Record<string, unknown>;
    for (const [field, value] of [
      ['vram_min', '40GB'],
      ['min_vram', 40],
      ['vendor', 'NVIDIA'],
      ['count', 5000],
    ] as const) {
      const copy = structuredClone(doc);
      (copy.allocations.trainer.resources.gpus as Record<string, unknown>)[field] = value;
      expect(validate(copy), field).toBe(false);
    }
    expect(gpus.count).toBe(4);
  });
});

describe(DOC_FILE, () => {
  it(`has up-to-date generated sections (else ${REGENERATE})`, async () => {
    const current = read(DOC_FILE);
    const options = (await resolveConfig(join(root, DOC_FILE))) ?? {};
    const fresh = await format(renderDoc(current, root), { ...options, filepath: join(root, DOC_FILE) });
    expect(current).toBe(fresh);
  });

  const blocks = (lang: string): string[] =>
    [...read(DOC_FILE).matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

  it('has a YAML example that is valid and explained as shown', () => {
    const [yamlBlock] = blocks('yaml');
    const explanation = explainEnsembleSpec(expectValid(parseEnsembleSpec(yamlBlock!)));
    const shown = blocks('text').find((b) => b.startsWith('trainer:'))!;
    for (const line of shown.trim().split('\n')) expect(explanation).toContain(line);
  });

  it('shows errors exactly as the parser reports them for test/fixtures/bad.yaml', () => {
    const errors = expectErrors(
      parseEnsembleSpec(readFileSync(join(import.meta.dirname, 'fixtures', 'bad.yaml'), 'utf8')),
    );
    const printed = errors.map((e) => formatSpecError(e, 'bad.yaml'));
    const shown = blocks('text').find((b) => b.startsWith('✗ bad.yaml'))!;
    expect(shown).toContain(`✗ bad.yaml: ${errors.length} errors`);
    for (const line of shown.split('\n').filter((l) => l.startsWith('  bad.yaml:')))
      expect(printed).toContain(line.trim());
  });
});
