import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { DEFAULT_LIMITS } from '../src/limits';
import { SPEC_ERROR_CODE_DOCS } from '../src/errors';
import { ensembleSpecJsonSchema } from '../src/json-schema';
import { DNS_LABEL_PATTERN, EnsembleSpecSourceSchema, specDocs } from '../src/source.schema';
import { BANDWIDTH_UNITS, DURATION_PATTERN, DURATION_UNITS_US, SIZE_UNITS } from '../src/units';
import { BANDWIDTH_PATTERN, MONEY_PATTERN, SIZE_PATTERN } from '../src/units';

/**
 * Renders the generated parts of `docs/ensemble-spec.md` and the published JSON Schema, so the
 * reference is produced from the same schema that validates (and a unit test fails when the
 * committed docs drift). Run `npx tsx libs/ensemble-spec/scripts/generate-docs.ts` after a change.
 */

type Json = Record<string, unknown>;

export const SCHEMA_FILE = 'docs/ensemble-spec.schema.json';
export const DOC_FILE = 'docs/ensemble-spec.md';
export const EXAMPLES_DIR = 'docs/examples';

/** The published schema file's text. */
export const renderSchemaFile = (): string => `${JSON.stringify(ensembleSpecJsonSchema(), null, 2)}\n`;

const SECTION_ORDER = [
  'EnsembleSpec',
  'Metadata',
  'Budget',
  'Allocation',
  'Execution',
  'Resources',
  'Cpu',
  'Ram',
  'Disk',
  'Gpus',
  'MinTflops',
  'Distributed',
  'GpusPerNode',
  'RanksPerNode',
  'Interconnect',
  'FailureRecovery',
  'Elastic',
  'Port',
  'Location',
  'LocationMatch',
  'Node',
  'EdgeConstraint',
];

const anchor = (id: string): string => `#${id.toLowerCase()}`;
/** Text of a JSON Schema keyword that holds text; '' otherwise. */
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const code = (s: unknown): string => `\`${typeof s === 'string' ? s : JSON.stringify(s)}\``;
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const typeOf = (s: Json): string => {
  if (typeof s.$ref === 'string') {
    const id = defId(s.$ref);
    return `[${id}](${anchor(id)})`;
  }
  if (Array.isArray(s.anyOf)) return (s.anyOf as Json[]).map(typeOf).join(' or ');
  if (s.const !== undefined) return code(s.const);
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map(code).join(' | ');
  if (s.pattern === SIZE_PATTERN) return 'size (`40GB`, `24GiB`)';
  if (s.pattern === BANDWIDTH_PATTERN) return 'bandwidth (`10Gbps`)';
  if (s.pattern === DURATION_PATTERN) return 'duration (`2h`, `1h30m`, `5ms`)';
  if (s.pattern === DNS_LABEL_PATTERN) return 'name (DNS label)';
  if (s.pattern === MONEY_PATTERN) return 'decimal string (`"2.50"`)';
  if (s.type === 'integer') {
    const lo = s.minimum as number | undefined;
    const hi = s.maximum as number | undefined;
    if (lo !== undefined && hi !== undefined && hi < Number.MAX_SAFE_INTEGER) return `integer ${lo}–${hi}`;
    return lo === undefined ? 'integer' : `integer ≥ ${lo}`;
  }
  if (s.type === 'array') {
    const tuple = s.prefixItems ?? s.items;
    if (Array.isArray(tuple)) return `pair of ${typeOf((tuple as Json[])[0]!)}`;
    return `list of ${typeOf(s.items as Json)}`;
  }
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') {
    return `map of name → ${typeOf(s.additionalProperties as Json)}`;
  }
  if (Array.isArray(s.type)) return (s.type as string[]).join(' or ');
  if (s.type === 'string' && typeof s.pattern === 'string') return `string matching ${code(s.pattern)}`;
  return text(s.type) || 'any';
};

const table = (header: string[], rows: string[][]): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');

/** `#/definitions/Gpus` (draft-07) or `#/$defs/Gpus` (2019-09 and later) → `Gpus`. */
const defId = (ref: string): string => ref.replace(/^#\/(\$defs|definitions)\//, '');
const definitions = (): Record<string, Json> => {
  const schema = ensembleSpecJsonSchema();
  return (schema.definitions ?? schema.$defs ?? {}) as Record<string, Json>;
};

/** One table per object of the format, in reading order. */
export const renderFieldTables = (): string => {
  const defs = definitions();
  const missing = Object.keys(defs).filter((id) => !SECTION_ORDER.includes(id));
  if (missing.length > 0) throw new Error(`add ${missing.join(', ')} to SECTION_ORDER in scripts/docs.ts`);
  return SECTION_ORDER.filter((id) => id in defs)
    .map((id) => {
      const def = defs[id]!;
      const required = new Set((def.required as string[] | undefined) ?? []);
      const rows = Object.entries((def.properties ?? {}) as Record<string, Json>).map(([name, prop]) => [
        code(name),
        typeOf(prop),
        required.has(name) ? 'yes' : prop.default === undefined ? '' : `default ${code(prop.default)}`,
        text(prop.description) || text(defs[defId(text(prop.$ref))]?.description),
      ]);
      return [
        `### ${id}`,
        '',
        `\`${text(def.title) || id}\` — ${text(def.description)}`,
        '',
        table(['Field', 'Type', 'Required', 'Meaning'], rows),
      ].join('\n');
    })
    .join('\n\n');
};

/** NuNet DMS V1 field → gpunet field, from the `nunet` notes on the schema. */
export const renderNunetMapping = (): string => {
  const rows: string[][] = [];
  const seen = new Set<z.ZodType>();
  const walk = (schema: z.ZodType, path: string): void => {
    if (seen.has(schema)) return;
    seen.add(schema);
    const meta = specDocs.get(schema);
    if (meta?.nunet && path !== '') rows.push([code(path), meta.nunet]);
    const def = (schema as unknown as { _zod: { def: Json } })._zod.def;
    switch (def.type) {
      case 'object':
        for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>))
          walk(v, path === '' ? k : `${path}.${k}`);
        break;
      case 'optional':
      case 'default':
        walk(def.innerType as z.ZodType, path);
        break;
      case 'record':
        walk(def.valueType as z.ZodType, `${path}.<name>`);
        break;
      case 'array':
        walk(def.element as z.ZodType, `${path}[]`);
        break;
      default:
        break;
    }
  };
  walk(EnsembleSpecSourceSchema, '');
  return table(['gpunet v1', 'NuNet DMS V1'], rows);
};

export const renderErrorCodes = (): string =>
  table(
    ['Code', 'Meaning'],
    Object.entries(SPEC_ERROR_CODE_DOCS).map(([c, d]) => [code(c), d]),
  );

const LIMIT_DOCS: Record<keyof typeof DEFAULT_LIMITS, string> = {
  maxBytes: 'document size in bytes',
  maxDepth: 'nesting of maps and lists',
  maxAliasCount: 'nodes YAML aliases may expand into (alias bombs)',
  maxGpusPerJob: 'GPUs in one job, over all allocations',
  maxAllocations: 'allocations',
  maxNodes: 'named nodes',
  maxEdgeConstraints: 'edge constraints',
  maxErrors: 'errors reported before the rest are summarized',
};

export const renderLimits = (): string =>
  table(
    ['Limit', 'Default', 'What'],
    Object.entries(DEFAULT_LIMITS).map(([k, v]) => [
      code(k),
      String(v),
      LIMIT_DOCS[k as keyof typeof DEFAULT_LIMITS],
    ]),
  );

export const renderUnits = (): string =>
  table(
    ['Quantity', 'Units', 'Normalized to'],
    [
      ['size', Object.keys(SIZE_UNITS).map(code).join(' '), 'bytes (integer)'],
      ['bandwidth', Object.keys(BANDWIDTH_UNITS).map(code).join(' '), 'bits per second (integer)'],
      [
        'duration',
        Object.keys(DURATION_UNITS_US).map(code).join(' ') + ', compound `1h30m`',
        'milliseconds (`max_duration`) or microseconds (`max_rtt`)',
      ],
      ['CPU', 'cores, up to three decimals (`0.5`)', 'millicores (integer)'],
      [
        'money',
        'decimal string (`"2.50"`) of the budget asset',
        'minor units as a decimal string (`"2500000"` for 2.50 USDC)',
      ],
    ],
  );

/** `docs/examples/*.yaml` with the first line of each header comment. */
export const renderExamples = (root: string): string => {
  const dir = join(root, EXAMPLES_DIR);
  const rows = readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => {
      const header = readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('#') && !l.includes('yaml-language-server'))
        .map((l) => l.replace(/^#\s?/, ''))
        .find((l) => l.trim() !== '');
      return [`[${f}](examples/${f})`, header ?? ''];
    });
  return table(['Example', 'What it shows'], rows);
};

export const GENERATED_SECTIONS = {
  units: (): string => renderUnits(),
  fields: (): string => renderFieldTables(),
  'error-codes': (): string => renderErrorCodes(),
  limits: (): string => renderLimits(),
  nunet: (): string => renderNunetMapping(),
  examples: (root: string): string => renderExamples(root),
} as const;

/** Replaces every `<!-- generated:NAME -->…<!-- /generated:NAME -->` block with fresh output. */
export const renderDoc = (current: string, root: string): string =>
  Object.entries(GENERATED_SECTIONS).reduce((text, [name, render]) => {
    const open = `<!-- generated:${name} -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = text.indexOf(open);
    const end = text.indexOf(close);
    if (start === -1 || end === -1) throw new Error(`${DOC_FILE} lacks the ${open} … ${close} block`);
    return `${text.slice(0, start + open.length)}\n\n${render(root)}\n\n${text.slice(end)}`;
  }, current);

/** The repository root: the nearest directory above `from` with an nx.json. */
export const findRepoRoot = (from: string): string => {
  let dir = from;
  for (let i = 0; i < 20; i++) {
    try {
      readFileSync(join(dir, 'nx.json'));
      return dir;
    } catch {
      dir = join(dir, '..');
    }
  }
  throw new Error(`no nx.json above ${from}`);
};
