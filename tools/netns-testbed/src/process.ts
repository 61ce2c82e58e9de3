import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

/** The process exited (or its wait timed out) before its output showed what was awaited. */
export class ProcessOutputTimeoutError extends Error {
  override readonly name = 'ProcessOutputTimeoutError';
  readonly code = 'PROCESS_OUTPUT_TIMEOUT' as const;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const MAX_KEPT = 2 * 1024 * 1024;

/** Pids of every process spawned here and still running: killed when the test process exits. */
const live = new Set<number>();
process.once('exit', () => {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * A long-running process of a test (a server, a rank, an agent), with its output kept (the last
 * 2 MiB of each stream) and awaitable: `waitForOutput(/listening/)` settles on the chunk that
 * matches, never by polling or sleeping. Killed at the latest when the test process exits.
 */
export class TestProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  #stdout = '';
  #stderr = '';
  #exit: ProcessExit | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #stdoutListeners = new Set<(chunk: string) => void>();
  readonly exited: Promise<ProcessExit>;

  constructor(
    readonly label: string,
    readonly argv: readonly string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {
    const [file, ...args] = argv;
    if (file === undefined) throw new Error('TestProcess: empty argv');
    this.#child = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    const pid = this.#child.pid;
    if (pid !== undefined) live.add(pid);
    this.#child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stdout = (this.#stdout + chunk).slice(-MAX_KEPT);
      for (const listener of [...this.#stdoutListeners]) listener(chunk);
      this.#notify();
    });
    this.#child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-MAX_KEPT);
      this.#notify();
    });
    this.#child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.#child.on('error', (error) => {
        this.#stderr += `\n[spawn failed: ${error.message}]`;
        this.#exit ??= { code: null, signal: null };
        if (pid !== undefined) live.delete(pid);
        this.#notify();
        resolve(this.#exit);
      });
      this.#child.on('close', (code, signal) => {
        this.#exit ??= { code, signal };
        if (pid !== undefined) live.delete(pid);
        this.#notify();
        resolve(this.#exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }
  get stdout(): string {
    return this.#stdout;
  }
  get stderr(): string {
    return this.#stderr;
  }
  /** Both streams, for error messages. */
  get output(): string {
    return `${this.#stdout}${this.#stderr ? `\n[stderr]\n${this.#stderr}` : ''}`;
  }
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Writes to the process's stdin. */
  write(text: string): void {
    this.#child.stdin.write(text);
  }

  /** Closes the process's stdin. */
  endInput(): void {
    this.#child.stdin.end();
  }

  /** Registers a callback for each chunk of stdout, as it arrives; returns its remover. */
  onStdout(listener: (chunk: string) => void): () => void {
    this.#stdoutListeners.add(listener);
    return () => this.#stdoutListeners.delete(listener);
  }

  /** Registers a callback run after each chunk of output and at exit; returns its remover. */
  onOutput(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves with the first match of `pattern` in stdout+stderr (existing output included). Rejects
   * when the process exits first or after `timeoutMs` (default 10 000), with the output so far.
   */
  waitForOutput(pattern: RegExp, options: { timeoutMs?: number } = {}): Promise<RegExpMatchArray> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = `${this.#stdout}\n${this.#stderr}`.match(pattern);
        if (match) {
          done();
          resolve(match);
          return true;
        }
        if (this.#exit) {
          done();
          reject(
            new ProcessOutputTimeoutError(
              `${this.label} exited (${JSON.stringify(this.#exit)}) before printing ${String(pattern)}:\n${this.output.slice(-4000)}`,
            ),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new ProcessOutputTimeoutError(
            `${this.label} did not print ${String(pattern)} within ${timeoutMs} ms:\n${this.output.slice(-4000)}`,
          ),
        );
      }, timeoutMs);
      const remove = this.onOutput(() => void check());
      const done = () => {
        clearTimeout(timer);
        remove();
      };
      check();
    });
  }

  /** Resolves with the exit, or rejects after `timeoutMs` (the process keeps running). */
  async waitForExit(timeoutMs = 10_000): Promise<ProcessExit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ProcessOutputTimeoutError(
              `${this.label} did not exit within ${timeoutMs} ms:\n${this.output.slice(-4000)}`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal; a process that already exited is left alone. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.#exit || this.#child.pid === undefined) return;
    try {
      process.kill(this.#child.pid, signal);
    } catch {
      // exited meanwhile
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs` (default 3 000); resolves once it has exited. */
  async stop(graceMs = 3_000): Promise<ProcessExit> {
    if (this.#exit) return this.#exit;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
