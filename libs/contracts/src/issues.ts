import type { z } from 'zod';
import type { ValidationIssue } from './errors';

/** Dotted path for a zod issue path: `['data', 'gpus', 0, 'uuid']` → `data.gpus[0].uuid`. */
export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    const name = String(key);
    return acc === '' ? name : `${acc}.${name}`;
  }, '');

/** zod's issues as our issues, with `prefix` before each path (`data` for a payload inside an envelope). */
export const toIssues = (error: z.ZodError, prefix: readonly PropertyKey[] = []): ValidationIssue[] =>
  error.issues.map((issue) => ({ path: formatPath([...prefix, ...issue.path]), message: issue.message }));
