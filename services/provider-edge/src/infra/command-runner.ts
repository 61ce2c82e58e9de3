import { execFile } from 'node:child_process';

/** What running a tool gave: its exit status and output, or that it is not installed. */
export type CommandResult =
  | { readonly found: true; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly found: false; readonly error: string };

/** Runs a program (no shell), so detection can be tested with a fake runner. */
export type CommandRunner = (program: string, args: readonly string[]) => Promise<CommandResult>;

/**
 * The real runner: `execFile` without a shell, a timeout (a hung driver must not hang the edge) and
 * bounded output.
 */
export const execRunner =
  (timeoutMs = 20_000): CommandRunner =>
  (program, args) =>
    new Promise((resolve) => {
      execFile(
        program,
        [...args],
        {
          timeout: timeoutMs,
          maxBuffer: 8 * 1024 * 1024,
          encoding: 'utf8',
          env: { ...process.env, LC_ALL: 'C' },
        },
        (error, stdout, stderr) => {
          if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
            resolve({ found: false, error: `${program} not found` });
            return;
          }
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ found: true, code, stdout, stderr: error && !stderr ? error.message : stderr });
        },
      );
    });
