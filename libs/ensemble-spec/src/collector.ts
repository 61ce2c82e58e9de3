import type { SpecErrorCode } from './errors';

/** A problem found while validating, before it is given a line and column. */
export interface RawIssue {
  readonly path: readonly PropertyKey[];
  readonly code: SpecErrorCode;
  readonly message: string;
  /** Point at the key rather than the value (unknown fields, bad names). */
  readonly atKey?: boolean;
}

export interface RawWarning {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** Gathers every problem instead of stopping at the first (the spec's errors are reported all at once). */
export class Collector {
  readonly errors: RawIssue[] = [];
  readonly warnings: RawWarning[] = [];

  error(path: readonly PropertyKey[], code: SpecErrorCode, message: string, atKey = false): void {
    this.errors.push(atKey ? { path, code, message, atKey } : { path, code, message });
  }

  warn(path: readonly PropertyKey[], message: string): void {
    this.warnings.push({ path, message });
  }

  get failed(): boolean {
    return this.errors.length > 0;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `['allocations', 'trainer', 'ports', 0, 'public']` → `allocations.trainer.ports[0].public`. */
export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === 'number') return `${acc}[${key}]`;
    const name = String(key);
    if (!IDENTIFIER.test(name)) return `${acc}[${JSON.stringify(name)}]`;
    return acc === '' ? name : `${acc}.${name}`;
  }, '');
