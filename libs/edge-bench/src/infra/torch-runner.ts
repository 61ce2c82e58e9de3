import {
  type BenchmarkProfile,
  BenchmarkProfileSchema,
  type BenchmarkSuite,
  toIssues,
} from '@gpunet/contracts';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** Where the script lives in a checkout; images copy it and pass `script`. */
export const GPU_BENCH_SCRIPT = resolve(import.meta.dirname, '../../../../tools/gpu-bench/gpu_bench.py');
/** Debian's python3-torch lives here; the first `python3` on PATH may be another interpreter. */
export const DEFAULT_PYTHON = '/usr/bin/python3';

export type BenchmarkRunnerErrorCode =
  'RUNNER_MISSING' | 'RUNNER_FAILED' | 'RUNNER_TIMED_OUT' | 'DEVICE_ABSENT' | 'INVALID_PROFILE' | 'ABORTED';

/** The benchmark run did not produce a valid profile. `code` says how; `stderr` holds the runner's last words. */
export class BenchmarkRunnerError extends Error {
  override readonly name = 'BenchmarkRunnerError';
  constructor(
    readonly code: BenchmarkRunnerErrorCode,
    message: string,
    readonly stderr = '',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isBenchmarkRunnerError = (e: unknown): e is BenchmarkRunnerError =>
  e instanceof BenchmarkRunnerError;

export interface TorchBenchmarkOptions {
  /** Python with torch. Default `/usr/bin/python3`. */
  readonly python?: string;
  /** Path of `gpu_bench.py`. Default: the checkout's `tools/gpu-bench/gpu_bench.py`. */
  readonly script?: string;
  /** `auto` (default): GPUs when torch sees any, else the CPU. */
  readonly device?: 'auto' | 'cpu' | 'cuda';
  /** Default: every suite. */
  readonly suites?: readonly BenchmarkSuite[];
  /** The whole run, interpreter start included, must end within this; the script gets it minus start-up. */
  readonly maxDurationMs: number;
  /** Profile validity after `measuredAt`. */
  readonly ttlMs: number;
  /** Tiny problem sizes (tests). Default false. */
  readonly quick?: boolean;
  /** Seconds per timed trial. Default the script's (0.25). */
  readonly minTrialSeconds?: number;
  /** Trials per figure. Default the script's (3). */
  readonly trials?: number;
  /** CPU threads; default torch's. */
  readonly threads?: number;
  readonly profileId?: string;
  /** GPU ids by vendor index (from the inventory), so the profile names GPUs as the inventory does. */
  readonly gpuUuids?: Readonly<Record<number, string>>;
  readonly signal?: AbortSignal;
  /** Environment of the interpreter. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Interpreter and torch import take a few seconds before the first measurement. */
const STARTUP_ALLOWANCE_MS = 10_000;

/** argv of one run (exported for tests and for sandboxes that start it themselves). */
export const torchBenchmarkArgs = (options: TorchBenchmarkOptions): string[] => {
  const budgetS = Math.max(1, (options.maxDurationMs - STARTUP_ALLOWANCE_MS) / 1000);
  const args = [
    '-B',
    options.script ?? GPU_BENCH_SCRIPT,
    '--device',
    options.device ?? 'auto',
    '--max-seconds',
    String(budgetS),
    '--ttl-seconds',
    String(Math.ceil(options.ttlMs / 1000)),
  ];
  if (options.suites) args.push('--suites', options.suites.join(','));
  if (options.quick) args.push('--quick');
  if (options.minTrialSeconds !== undefined)
    args.push('--min-trial-seconds', String(options.minTrialSeconds));
  if (options.trials !== undefined) args.push('--trials', String(options.trials));
  if (options.threads !== undefined) args.push('--threads', String(options.threads));
  if (options.profileId !== undefined) args.push('--profile-id', options.profileId);
  if (options.gpuUuids && Object.keys(options.gpuUuids).length > 0)
    args.push(
      '--uuids',
      Object.entries(options.gpuUuids)
        .map(([i, u]) => `${i}=${u}`)
        .join(','),
    );
  return args;
};

/**
 * Runs `gpu_bench.py` and returns its profile, validated against the contract. The process is killed
 * when `maxDurationMs` passes or `signal` aborts; every failure is a `BenchmarkRunnerError`.
 */
export const runTorchBenchmark = (options: TorchBenchmarkOptions): Promise<BenchmarkProfile> =>
  new Promise((resolvePromise, reject) => {
    const python = options.python ?? DEFAULT_PYTHON;
    const child = spawn(python, torchBenchmarkArgs(options), {
      env: { ...(options.env ?? process.env), PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    let failure: BenchmarkRunnerError | undefined;
    const fail = (error: BenchmarkRunnerError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        fail(new BenchmarkRunnerError('RUNNER_TIMED_OUT', `benchmark ran past ${options.maxDurationMs} ms`)),
      options.maxDurationMs,
    );
    const onAbort = () => fail(new BenchmarkRunnerError('ABORTED', 'benchmark aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    child.on('error', (error) => {
      failure ??= new BenchmarkRunnerError('RUNNER_MISSING', `cannot start ${python}: ${error.message}`, '', {
        cause: error,
      });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(Object.assign(failure, { stderr: failure.stderr || stderr }));
      if (code === 3) return reject(new BenchmarkRunnerError('DEVICE_ABSENT', stderr.trim(), stderr));
      if (code !== 0)
        return reject(
          new BenchmarkRunnerError('RUNNER_FAILED', `gpu_bench exited ${code}: ${stderr.trim()}`, stderr),
        );
      let raw: unknown;
      try {
        raw = JSON.parse(Buffer.concat(stdout).toString('utf8'));
      } catch (error) {
        return reject(
          new BenchmarkRunnerError('INVALID_PROFILE', 'gpu_bench printed no JSON', stderr, { cause: error }),
        );
      }
      const parsed = BenchmarkProfileSchema.safeParse(raw);
      if (!parsed.success)
        return reject(
          new BenchmarkRunnerError(
            'INVALID_PROFILE',
            `profile off contract: ${toIssues(parsed.error)
              .map((i) => `${i.path}: ${i.message}`)
              .join('; ')}`,
            stderr,
          ),
        );
      resolvePromise(parsed.data);
    });
  });
