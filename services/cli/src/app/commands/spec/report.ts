import { formatSpecError, type SpecError, type SpecWarning } from '@gpunet/ensemble-spec';
import type { FileOutcome } from './spec-files';

/** A file that could not be read at all has this one error instead of spec errors. */
export interface UnreadableError {
  readonly path: '';
  readonly code: 'UNREADABLE';
  readonly message: string;
}

/** The machine-readable outcome of one file (`--json`). */
export interface FileReport {
  readonly file: string;
  readonly ok: boolean;
  readonly errors: readonly (SpecError | UnreadableError)[];
  readonly warnings: readonly SpecWarning[];
}

export const toReport = (o: FileOutcome): FileReport => {
  if ('readError' in o) {
    return {
      file: o.file,
      ok: false,
      errors: [{ path: '', code: 'UNREADABLE', message: `cannot read: ${o.readError}` }],
      warnings: [],
    };
  }
  return o.result.ok
    ? { file: o.file, ok: true, errors: [], warnings: o.result.warnings }
    : { file: o.file, ok: false, errors: o.result.errors, warnings: o.result.warnings };
};

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Human output for one file: a status line, then `file:line:column: path: message [CODE]` lines. */
export const formatReport = (r: FileReport, quiet = false): string => {
  const lines: string[] = [];
  if (r.ok) {
    if (!quiet)
      lines.push(`✓ ${r.file}${r.warnings.length > 0 ? ` (${plural(r.warnings.length, 'warning')})` : ''}`);
  } else {
    lines.push(`✗ ${r.file}: ${plural(r.errors.length, 'error')}`);
    for (const e of r.errors) lines.push(`  ${formatSpecError(e, r.file)}`);
  }
  if (!quiet) for (const w of r.warnings) lines.push(`  warning: ${formatSpecError(w, r.file)}`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
};
