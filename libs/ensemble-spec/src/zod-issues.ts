import type { z } from 'zod';
import type { Collector } from './collector';
import { formatPath } from './collector';
import {
  allowedValuesAt,
  closest,
  fieldIndex,
  KNOWN_RENAMES,
  knownFieldsAt,
  UNSUPPORTED_FIELDS,
} from './suggest';

const describeInput = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'string') return `text ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
    return `${typeof v} ${String(v)}`;
  return typeof v;
};

const EXPECTED: Record<string, string> = {
  object: 'a map',
  array: 'a list',
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  tuple: 'a list',
  record: 'a map',
};

/** zod's own English ("Invalid input: …") is replaced; our schemas' custom messages are kept. */
const isDefaultMessage = (message: string): boolean =>
  /^(Invalid input|Invalid option|Invalid string|Invalid key|Too big|Too small|Invalid element|Invalid number)/.test(
    message,
  );

type Issue = z.core.$ZodIssue & { input?: unknown };

const unknownFieldMessage = (
  root: z.ZodType,
  path: readonly PropertyKey[],
  key: string,
  index: ReadonlyMap<string, string[]>,
): string => {
  const known = knownFieldsAt(root, path);
  const quoted = `unknown field '${key}'`;
  const unsupported = UNSUPPORTED_FIELDS[key];
  if (unsupported) return `${quoted} — ${unsupported}`;
  const renamed = KNOWN_RENAMES[key];
  if (renamed && known.includes(renamed)) return `${quoted} — did you mean '${renamed}'?`;
  const near = closest(key, known);
  if (near) return `${quoted} — did you mean '${near}'?`;
  const elsewhere = index.get(key) ?? (renamed ? index.get(renamed) : undefined);
  if (elsewhere && elsewhere.length > 0) {
    const field = index.has(key) ? key : renamed!;
    const where = [...new Set(elsewhere)]
      .map((w) => (w === '' ? 'the top level' : w))
      .slice(0, 3)
      .join(' or ');
    return `${quoted} — '${field}' belongs under ${where}`;
  }
  return known.length > 0 ? `${quoted} — allowed here: ${known.join(', ')}` : quoted;
};

let cachedIndex: { root: z.ZodType; index: ReadonlyMap<string, string[]> } | undefined;
const indexFor = (root: z.ZodType): ReadonlyMap<string, string[]> => {
  if (cachedIndex?.root !== root) cachedIndex = { root, index: fieldIndex(root) };
  return cachedIndex.index;
};

/**
 * Turns zod's issues into our errors: one per unknown key, missing fields as MISSING_FIELD, enum
 * typos with "did you mean", unions reduced to the branch the input was aiming at.
 */
export const collectZodIssues = (
  issues: readonly z.core.$ZodIssue[],
  root: z.ZodType,
  out: Collector,
  prefix: readonly PropertyKey[] = [],
): void => {
  for (const raw of issues) {
    const issue: Issue = raw;
    const path = [...prefix, ...issue.path];
    const last = path[path.length - 1];
    const missing =
      issue.input === undefined &&
      (issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_union');
    if (missing) {
      out.error(
        path,
        'MISSING_FIELD',
        `missing required field '${last === undefined ? 'document' : String(last)}'`,
      );
      continue;
    }
    switch (issue.code) {
      case 'unrecognized_keys': {
        for (const key of issue.keys) {
          out.error(
            [...path, key],
            'UNKNOWN_FIELD',
            unknownFieldMessage(root, path, key, indexFor(root)),
            true,
          );
        }
        break;
      }
      case 'invalid_type': {
        if (path.length === 0) {
          out.error(
            path,
            'INVALID_TYPE',
            `a spec is a map (apiVersion, kind, metadata, allocations, …), got ${describeInput(issue.input)}`,
          );
        } else if (!isDefaultMessage(issue.message)) {
          out.error(path, 'INVALID_TYPE', issue.message);
        } else {
          const expected = EXPECTED[issue.expected] ?? issue.expected;
          out.error(path, 'INVALID_TYPE', `expected ${expected}, got ${describeInput(issue.input)}`);
        }
        break;
      }
      case 'invalid_value': {
        if (path.length === 1 && (path[0] === 'apiVersion' || path[0] === 'kind')) {
          out.error(path, 'UNSUPPORTED_VERSION', issue.message);
          break;
        }
        if (!isDefaultMessage(issue.message)) {
          out.error(path, 'INVALID_VALUE', issue.message);
          break;
        }
        const allowed = issue.values.map(String);
        const given = String(issue.input);
        const near =
          typeof issue.input === 'string'
            ? closest(given, allowed.length > 0 ? allowed : allowedValuesAt(root, path))
            : undefined;
        const hint = near ? ` — did you mean '${near}'?` : '';
        out.error(
          path,
          'INVALID_VALUE',
          allowed.length === 1
            ? `must be ${JSON.stringify(allowed[0])}, got ${describeInput(issue.input)}`
            : `${typeof issue.input === 'string' ? `'${given}'` : describeInput(issue.input)} is not one of ${allowed.join(', ')}${hint}`,
        );
        break;
      }
      case 'too_big':
      case 'too_small': {
        const isList = issue.origin === 'array' || issue.origin === 'set';
        const code = isList && issue.code === 'too_big' ? 'LIMIT_EXCEEDED' : 'OUT_OF_RANGE';
        if (!isDefaultMessage(issue.message)) {
          out.error(path, code, issue.message);
          break;
        }
        const bound = issue.code === 'too_big' ? issue.maximum : issue.minimum;
        const exclusive = !issue.inclusive;
        let message: string;
        if (issue.origin === 'string') {
          message =
            issue.code === 'too_small'
              ? Number(bound) <= 1
                ? 'must not be empty'
                : `must be at least ${String(bound)} characters`
              : `must be at most ${String(bound)} characters`;
        } else if (isList) {
          message =
            issue.code === 'too_small'
              ? `needs at least ${String(bound)} entries`
              : `at most ${String(bound)} entries`;
        } else {
          const rel2 =
            issue.code === 'too_big'
              ? exclusive
                ? 'less than'
                : 'at most'
              : exclusive
                ? 'greater than'
                : 'at least';
          message = `must be ${rel2} ${String(bound)}, got ${describeInput(issue.input)}`;
        }
        out.error(path, code, message);
        break;
      }
      case 'invalid_format':
      case 'custom':
      case 'not_multiple_of': {
        out.error(
          path,
          issue.code === 'not_multiple_of' ? 'OUT_OF_RANGE' : 'INVALID_VALUE',
          isDefaultMessage(issue.message) ? `invalid value ${describeInput(issue.input)}` : issue.message,
        );
        break;
      }
      case 'invalid_key': {
        const inner = issue.issues[0];
        const message =
          inner && !isDefaultMessage(inner.message) ? inner.message : `invalid name '${String(last)}'`;
        out.error(path, 'INVALID_VALUE', message, true);
        break;
      }
      case 'invalid_union': {
        if (!isDefaultMessage(issue.message)) {
          out.error(path, 'INVALID_TYPE', issue.message);
          break;
        }
        // The branch whose type matched is the one the writer meant: report its problems.
        const meant = issue.errors.find(
          (branch) =>
            branch.length > 0 && !branch.every((b) => b.code === 'invalid_type' && b.path.length === 0),
        );
        if (meant) {
          collectZodIssues(meant, root, out, path);
          break;
        }
        const expected = issue.errors
          .flatMap((branch) =>
            branch.map((b) => (b.code === 'invalid_type' ? (EXPECTED[b.expected] ?? b.expected) : undefined)),
          )
          .filter((e): e is string => e !== undefined);
        out.error(
          path,
          'INVALID_TYPE',
          `expected ${[...new Set(expected)].join(' or ') || 'another value'}, got ${describeInput(issue.input)}`,
        );
        break;
      }
      case 'invalid_element': {
        collectZodIssues(issue.issues, root, out, path);
        break;
      }
      default: {
        const never: never = issue;
        out.error(path, 'INVALID_VALUE', `invalid value at ${formatPath(path)}: ${(never as Issue).message}`);
      }
    }
  }
};
