import type { ChallengeDtype } from '@gpunet/contracts';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DEFAULT_PYTHON } from './torch-runner';

/** Where the worker lives in a checkout (beside `gpu_bench.py`); images copy it and pass `script`. */
export const CHALLENGE_WORKER_SCRIPT = resolve(
  import.meta.dirname,
  '../../../../tools/gpu-bench/challenge_worker.py',
);

/** The device a challenge runs on: the GPU's vendor index (as nvidia-smi numbers it) and its uuid. */
export interface ChallengeDevice {
  readonly index: number;
  readonly uuid?: string;
}

/** What the worker says when it could not do what was asked. */
export type ChallengeWorkerFailureCode =
  | 'INVALID_REQUEST'
  | 'UNKNOWN_DEVICE'
  | 'UNSUPPORTED_DTYPE'
  | 'UNKNOWN_CHALLENGE'
  /** The deadline passed; the worker stopped computing. */
  | 'DEADLINE'
  /** A fault of the host (out of memory, a driver error). */
  | 'FAILED';

export type ChallengeWorkerFailure = {
  readonly ok: false;
  readonly code: ChallengeWorkerFailureCode;
  readonly message: string;
};

export type WorkerCommitAnswer =
  | {
      readonly ok: true;
      readonly root: string;
      readonly edgeComputeMs: number;
      /** `cuda:0 NVIDIA H100 80GB HBM3`, or `cpu`. */
      readonly device: string;
      /** The input dtype the product was computed at (fp32 where the CPU has no fp16 kernel). */
      readonly dtype: string;
    }
  | ChallengeWorkerFailure;

export type WorkerOpenAnswer =
  | {
      readonly ok: true;
      readonly rows: { index: number; values: number[]; proof: string[] }[];
      readonly product: number[];
    }
  | ChallengeWorkerFailure;

export interface WorkerCommitRequest {
  readonly challengeId: string;
  readonly seed: string;
  readonly n: number;
  readonly dtype: ChallengeDtype;
  readonly device: ChallengeDevice;
  readonly deadlineMs: number;
}

export interface WorkerOpenRequest {
  readonly challengeId: string;
  readonly rows: readonly number[];
  readonly freivaldsSeed: string;
}

/** The edge's challenge computer: `spawnChallengeWorker` (Python/torch), or a fake in tests. */
export interface ChallengeWorker {
  commit(request: WorkerCommitRequest): Promise<WorkerCommitAnswer>;
  open(request: WorkerOpenRequest): Promise<WorkerOpenAnswer>;
  /** Starts the worker and initialises the devices (CUDA context, kernels) before the first challenge. */
  warm(devices: readonly ChallengeDevice[]): Promise<void>;
  close(): Promise<void>;
}

export type ChallengeWorkerErrorCode =
  'WORKER_MISSING' | 'WORKER_EXITED' | 'WORKER_TIMED_OUT' | 'WORKER_CLOSED';

/** The worker process did not answer: it could not start, died, or ran past its bound. */
export class ChallengeWorkerError extends Error {
  override readonly name = 'ChallengeWorkerError';
  constructor(
    readonly code: ChallengeWorkerErrorCode,
    message: string,
    readonly stderr = '',
  ) {
    super(message);
  }
}

export const isChallengeWorkerError = (e: unknown): e is ChallengeWorkerError =>
  e instanceof ChallengeWorkerError;

export interface ChallengeWorkerOptions {
  /** Python with torch. Default `/usr/bin/python3` (Debian's python3-torch). */
  readonly python?: string;
  /** Path of `challenge_worker.py`. Default: the checkout's. */
  readonly script?: string;
  /** CPU threads for torch (the CPU path). Default: torch's. */
  readonly threads?: number;
  /** How long an unopened commitment is kept, s. Default the worker's (300). */
  readonly ttlSeconds?: number;
  /** Interpreter start and `import torch`, ms. Default 60 000. */
  readonly startTimeoutMs?: number;
  /**
   * A commit that has not answered this long after its deadline gets the process killed (the worker
   * checks its deadline between blocks; this bounds one block that never ends). Default 10 000.
   */
  readonly commitGraceMs?: number;
  /** An opening (hashing done, C·r in int64) must answer within this, ms. Default 60 000. */
  readonly openTimeoutMs?: number;
  /** Environment of the interpreter. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
}

interface Waiting {
  readonly resolve: (answer: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Runs `tools/gpu-bench/challenge_worker.py` as one long-lived process, started on the first request
 * (or `warm`) and kept: `import torch` and a CUDA context take seconds that a challenge's deadline
 * does not allow for. Requests go one JSON line each and are answered in order. A process that dies
 * or overruns is killed and the next request starts a fresh one.
 */
export class PythonChallengeWorker implements ChallengeWorker {
  private child: ChildProcessWithoutNullStreams | undefined;
  private ready: Promise<void> | undefined;
  private readonly waiting: Waiting[] = [];
  private stderr = '';
  private closed = false;

  constructor(private readonly options: ChallengeWorkerOptions = {}) {}

  /** The running process's id (benches read its memory), if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  commit(request: WorkerCommitRequest): Promise<WorkerCommitAnswer> {
    return this.send(
      { op: 'commit', ...request },
      request.deadlineMs + (this.options.commitGraceMs ?? 10_000),
    ) as Promise<WorkerCommitAnswer>;
  }

  open(request: WorkerOpenRequest): Promise<WorkerOpenAnswer> {
    return this.send(
      { op: 'open', ...request },
      this.options.openTimeoutMs ?? 60_000,
    ) as Promise<WorkerOpenAnswer>;
  }

  async warm(devices: readonly ChallengeDevice[]): Promise<void> {
    const answer = (await this.send({ op: 'warm', devices }, this.options.startTimeoutMs ?? 60_000)) as {
      ok: boolean;
      message?: string;
    };
    if (!answer.ok)
      throw new ChallengeWorkerError('WORKER_EXITED', `warm-up failed: ${answer.message ?? ''}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  }

  private async send(request: object, timeoutMs: number): Promise<unknown> {
    if (this.closed) throw new ChallengeWorkerError('WORKER_CLOSED', 'the challenge worker is closed');
    await this.start();
    const child = this.child!;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.kill(new ChallengeWorkerError('WORKER_TIMED_OUT', `no answer in ${timeoutMs} ms`, this.stderr));
      }, timeoutMs);
      this.waiting.push({ resolve: resolvePromise, reject, timer });
      child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const o = this.options;
    const python = o.python ?? DEFAULT_PYTHON;
    const args = ['-B', o.script ?? CHALLENGE_WORKER_SCRIPT];
    if (o.threads !== undefined) args.push('--threads', String(o.threads));
    if (o.ttlSeconds !== undefined) args.push('--ttl-seconds', String(o.ttlSeconds));
    this.stderr = '';
    const child = spawn(python, args, {
      // PCI bus order: torch numbers GPUs as nvidia-smi (and so the inventory) does.
      env: { ...(o.env ?? process.env), PYTHONDONTWRITEBYTECODE: '1', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4096);
    });
    this.ready = new Promise<void>((resolveReady, rejectReady) => {
      let started = false;
      const timer = setTimeout(
        () =>
          this.kill(new ChallengeWorkerError('WORKER_TIMED_OUT', 'the worker did not start', this.stderr)),
        o.startTimeoutMs ?? 60_000,
      );
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          return this.kill(
            new ChallengeWorkerError('WORKER_EXITED', `the worker printed ${line.slice(0, 200)}`),
          );
        }
        if (!started) {
          started = true;
          clearTimeout(timer);
          return resolveReady();
        }
        const head = this.waiting.shift();
        if (!head) return;
        clearTimeout(head.timer);
        head.resolve(message);
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        this.reset(new ChallengeWorkerError('WORKER_MISSING', `cannot start ${python}: ${error.message}`));
        rejectReady(new ChallengeWorkerError('WORKER_MISSING', `cannot start ${python}: ${error.message}`));
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        const error = new ChallengeWorkerError(
          'WORKER_EXITED',
          `the challenge worker exited (${signal ?? code}): ${this.stderr.trim().slice(-500)}`,
          this.stderr,
        );
        if (this.child === child) this.reset(error);
        if (!started) rejectReady(error);
      });
    });
    return this.ready;
  }

  /** Kills the process (its exit rejects what waits); the next request starts another. */
  private kill(error: ChallengeWorkerError): void {
    const child = this.child;
    this.reset(error);
    child?.kill('SIGKILL');
  }

  private reset(error: Error): void {
    this.child = undefined;
    this.ready = undefined;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(error);
    }
  }
}

export const spawnChallengeWorker = (options: ChallengeWorkerOptions = {}): ChallengeWorker =>
  new PythonChallengeWorker(options);
