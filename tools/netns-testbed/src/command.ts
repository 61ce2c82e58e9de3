import { spawn } from 'node:child_process';

/** A command that exited with a non-zero status, was killed, or could not start. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  readonly code = 'COMMAND_FAILED' as const;
  constructor(
    readonly argv: readonly string[],
    readonly status: number | null,
    readonly stdout: string,
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${argv.join(' ')} failed (${status === null ? 'killed or not started' : `exit ${status}`}): ${stderr.trim() || stdout.trim()}`,
      options,
    );
  }
}

export interface RunOptions {
  /** Kill the command after this many ms. Default 10 000. */
  readonly timeoutMs?: number;
  /** Written to the command's stdin, which is then closed. */
  readonly input?: string;
  /** Resolve with a non-zero status instead of throwing. */
  readonly allowFailure?: boolean;
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a short command to completion, bounded in time; throws `CommandFailedError` unless it succeeds. */
export const run = (argv: readonly string[], options: RunOptions = {}): Promise<RunResult> => {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('run: empty argv');
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new CommandFailedError(argv, null, stdout, `${stderr}${error.message}`, { cause: error }));
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      const result = { status, stdout, stderr };
      if (status === 0 || options.allowFailure) resolve(result);
      else reject(new CommandFailedError(argv, status, stdout, stderr));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
};
