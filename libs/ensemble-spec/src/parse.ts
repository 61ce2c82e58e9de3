import type { z } from 'zod';
import { Collector, formatPath, type RawIssue, type RawWarning } from './collector';
import { normalizeAllocation } from './allocation';
import { EnsembleSpecError, type SpecError, type SpecWarning } from './errors';
import { DEFAULT_LIMITS, FIELD_LIMITS, type SpecLimits } from './limits';
import type { NormalizedSpec } from './normalized.schema';
import { checkReferences, normalizeSpec } from './normalize';
import { loadSource, type SourceDocument, type SpecFormat } from './source-document';
import {
  AllocationSource,
  EdgeConstraintSource,
  EnsembleSpecSourceSchema,
  NodeSource,
} from './source.schema';
import { parseDurationMs } from './units';
import { collectZodIssues } from './zod-issues';

export interface ParseOptions {
  /** Shown in no message, but picks the format from the extension (`.json` → JSON). */
  readonly filename?: string;
  /** Overrides the format the filename implies. Default: YAML. */
  readonly format?: SpecFormat;
  /** Stricter limits than the defaults (a gateway may want fewer GPUs per job). */
  readonly limits?: Partial<SpecLimits>;
}

export type ParseResult =
  | { readonly ok: true; readonly spec: NormalizedSpec; readonly warnings: readonly SpecWarning[] }
  | { readonly ok: false; readonly errors: readonly SpecError[]; readonly warnings: readonly SpecWarning[] };

export const formatOf = (options: Pick<ParseOptions, 'filename' | 'format'>): SpecFormat =>
  options.format ?? (options.filename?.toLowerCase().endsWith('.json') ? 'json' : 'yaml');

const byPosition = <T extends { line?: number; column?: number }>(a: T, b: T): number =>
  (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
  (a.column ?? 0) - (b.column ?? 0);

const place = (doc: SourceDocument, issue: RawIssue): SpecError => {
  const pos = doc.locate(issue.path, { key: issue.atKey === true });
  return {
    path: formatPath(issue.path),
    ...(pos ? { line: pos.line, column: pos.column } : {}),
    message: issue.message,
    code: issue.code,
  };
};

const placeWarning = (doc: SourceDocument, w: RawWarning): SpecWarning => {
  const pos = doc.locate(w.path);
  return {
    path: formatPath(w.path),
    ...(pos ? { line: pos.line, column: pos.column } : {}),
    message: w.message,
  };
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * When the document as a whole fails the schema, the allocations that are valid on their own are
 * still checked, so that a typo in one place does not hide a contradiction in another.
 */
const checkValidAllocations = (value: unknown, c: Collector): void => {
  if (!isRecord(value) || !isRecord(value.allocations)) return;
  const ms =
    typeof value.max_duration === 'string'
      ? parseDurationMs(value.max_duration, FIELD_LIMITS.maxDurationMs)
      : undefined;
  for (const [name, raw] of Object.entries(value.allocations)) {
    const parsed = AllocationSource.safeParse(raw);
    if (parsed.success)
      normalizeAllocation(name, parsed.data, ms?.ok && ms.value > 0 ? ms.value : undefined, c);
  }
  const nodes = isRecord(value.nodes)
    ? Object.fromEntries(
        Object.entries(value.nodes).flatMap(([name, raw]) => {
          const parsed = NodeSource.safeParse(raw);
          return parsed.success ? [[name, parsed.data] as const] : [];
        }),
      )
    : undefined;
  // Keep each edge at its index so the paths stay right; invalid ones are skipped.
  const edges = Array.isArray(value.edge_constraints)
    ? value.edge_constraints.map((raw) => {
        const parsed = EdgeConstraintSource.safeParse(raw);
        return parsed.success ? parsed.data : { between: [] };
      })
    : undefined;
  checkReferences(Object.keys(value.allocations), nodes, edges, c);
};

/** A copy of `value` without the keys zod reported as unrecognized; `undefined` if there were none. */
const withoutUnknownKeys = (value: unknown, issues: readonly z.core.$ZodIssue[]): unknown => {
  const unknown = issues.filter((i) => i.code === 'unrecognized_keys');
  if (unknown.length === 0) return undefined;
  const copy = structuredClone(value);
  for (const issue of unknown) {
    let target: unknown = copy;
    for (const key of issue.path)
      target =
        isRecord(target) || Array.isArray(target) ? (target as Record<PropertyKey, unknown>)[key] : undefined;
    if (isRecord(target)) for (const key of issue.keys) delete target[key];
  }
  return copy;
};

const run = (source: string, options: ParseOptions): ParseResult => {
  const limits: SpecLimits = { ...DEFAULT_LIMITS, ...options.limits };
  if (typeof source !== 'string') {
    return {
      ok: false,
      errors: [{ path: '', code: 'INVALID_TYPE', message: 'the spec source must be text' }],
      warnings: [],
    };
  }
  const loaded = loadSource(source, formatOf(options), limits);
  if (!loaded.ok) return { ok: false, errors: loaded.errors, warnings: [] };
  const { doc } = loaded;
  if (doc.value === null || doc.value === undefined) {
    return {
      ok: false,
      errors: [
        {
          path: '',
          line: 1,
          column: 1,
          code: 'MISSING_FIELD',
          message: 'the document is empty; a spec starts with apiVersion: gpunet.io/v1',
        },
      ],
      warnings: doc.warnings,
    };
  }

  const c = new Collector();
  const parsed = EnsembleSpecSourceSchema.safeParse(doc.value, { reportInput: true });
  let spec: NormalizedSpec | undefined;
  if (parsed.success) {
    spec = normalizeSpec(parsed.data, limits, c);
  } else {
    collectZodIssues(parsed.error.issues, EnsembleSpecSourceSchema, c);
    // Typos are the commonest problem: without the unknown fields the rest may be checkable, so
    // that one misspelt key does not hide a contradiction elsewhere.
    const stripped = withoutUnknownKeys(doc.value, parsed.error.issues);
    const retry = stripped === undefined ? undefined : EnsembleSpecSourceSchema.safeParse(stripped);
    if (retry?.success) normalizeSpec(retry.data, limits, c);
    else checkValidAllocations(stripped ?? doc.value, c);
  }
  const warnings = [...doc.warnings, ...c.warnings.map((w) => placeWarning(doc, w))].sort(byPosition);
  if (spec !== undefined && !c.failed) return { ok: true, spec, warnings };

  // One problem reported once, even when two checks found it.
  const seen = new Set<string>();
  let errors = c.errors
    .map((issue) => place(doc, issue))
    .filter((e) => {
      const key = `${e.path}\u0000${e.code}\u0000${e.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort(byPosition);
  if (errors.length > limits.maxErrors) {
    const dropped = errors.length - limits.maxErrors;
    errors = [
      ...errors.slice(0, limits.maxErrors),
      {
        path: '',
        code: 'TOO_MANY_ERRORS',
        message: `${dropped} more error${dropped === 1 ? '' : 's'} not shown`,
      },
    ];
  }
  return { ok: false, errors, warnings };
};

/**
 * Parses, validates and normalizes an ensemble spec (YAML or JSON). Never throws: every problem,
 * including a bug in this library, comes back as an error with a path, a position where known, a
 * code and a message that says what to do.
 */
export const parseEnsembleSpec = (source: string, options: ParseOptions = {}): ParseResult => {
  try {
    return run(source, options);
  } catch (e) {
    return {
      ok: false,
      errors: [
        {
          path: '',
          code: 'INTERNAL',
          message: `the spec could not be checked (a bug in @gpunet/ensemble-spec): ${e instanceof Error ? e.message : String(e)}`,
        },
      ],
      warnings: [],
    };
  }
};

/** `parseEnsembleSpec` for callers that want an exception (`EnsembleSpecError`, with every error). */
export const parseEnsembleSpecOrThrow = (source: string, options: ParseOptions = {}): NormalizedSpec => {
  const result = parseEnsembleSpec(source, options);
  if (!result.ok) throw new EnsembleSpecError(result.errors);
  return result.spec;
};
