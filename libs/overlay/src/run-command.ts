import { spawn } from 'node:child_process';

/** A system command (`ip`, `wg`, `nsenter`) failed. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
  readonly code = 'COMMAND_FAILED' as const;
  constructor(
    readonly argv: readonly string[],
    readonly status: number | null,
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${argv.join(' ')}: ${status === null ? 'did not run to completion' : `exit ${status}`}: ${stderr.trim()}`,
      options,
    );
  }
}

/** Runs a short command (bounded by `timeoutMs`, default 10 s) and returns its stdout. */
export const runCommand = (
  argv: readonly string[],
  options: { timeoutMs?: number; input?: string } = {},
): Promise<string> => {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('runCommand: empty argv');
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new CommandError(argv, null, error.message, { cause: error }));
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      if (status === 0) resolve(stdout);
      else reject(new CommandError(argv, status, stderr || stdout));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
};
