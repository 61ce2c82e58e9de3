import type { CliIo } from './io';

/** Process exit codes every command uses. */
export const ExitCode = {
  /** Everything was valid / done. */
  Ok: 0,
  /** The command ran and found a problem (an invalid spec, an unreadable file). */
  Failed: 1,
  /** The command line itself was wrong (unknown command or option, missing argument). */
  Usage: 2,
  /** The gateway refused the API key: not logged in, a wrong or revoked key (401), a missing scope (403). */
  Auth: 3,
  /** The gateway has no such job, subnet or key (404; another tenant's job is one too). */
  NotFound: 4,
  /** The gateway could not be reached (connection refused, DNS, timeout, an event stream that kept dropping). */
  Unreachable: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A leaf command: `gpunet spec validate`. */
export interface Command {
  readonly name: string;
  /** One line for the group's help. */
  readonly summary: string;
  /** The full help text, shown by `--help`. */
  readonly help: string;
  readonly run: (args: readonly string[], io: CliIo) => Promise<ExitCode>;
}

/** A group of commands: `gpunet spec …`. Later groups (`edge`, `job`, …) plug in the same way. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly Command[];
}

/** A command line the user got wrong; the dispatcher prints it with the relevant help. */
export class UsageError extends Error {
  readonly code = 'USAGE' as const;
  override readonly name = 'UsageError';
}
