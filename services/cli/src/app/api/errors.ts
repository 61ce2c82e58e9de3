import type { ExitCode } from '../command';

/** A field at fault, as the gateway's problem documents name it. */
export interface ProblemIssue {
  readonly path: string;
  readonly message: string;
  readonly code?: string;
  readonly line?: number;
  readonly column?: number;
}

/** RFC 9457 problem details with gpunet's `code` and `errors` (docs/api.md). */
export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance?: string;
  readonly code?: string;
  readonly errors?: readonly ProblemIssue[];
}

/**
 * A failure a command reports and exits with: its exit code, a message for people and, when the
 * gateway answered with one, the problem document (printed as is with `--json`).
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly problem?: Problem,
  ) {
    super(message);
  }
}

export const isCliError = (e: unknown): e is CliError => e instanceof CliError;
