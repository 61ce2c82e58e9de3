import type { Gpu, GpuLink } from '@gpunet/contracts';

/** Something a parser could not read; the GPU (or link) it concerns is left out and the problem kept. */
export interface ParseProblem {
  /** 1-based line of the tool's output (0 when the whole output is at fault). */
  readonly line: number;
  /** The column or key, when one field is at fault. */
  readonly field: string | null;
  readonly message: string;
}

/** A GPU as a backend saw it: the reported fields plus readings that change all the time. */
export interface DetectedGpu extends Gpu {
  /** Percent busy at detection time; null when the driver does not say (`[N/A]`, MIG mode). */
  readonly utilizationPercent: number | null;
}

export interface Parsed<T> {
  readonly value: T;
  readonly problems: readonly ParseProblem[];
}

/** What one detection backend found. */
export interface BackendResult {
  readonly name: 'nvidia' | 'amd' | 'simulated';
  readonly status: 'ok' | 'absent' | 'failed';
  readonly detail: string | null;
  readonly gpus: readonly DetectedGpu[];
  readonly links: readonly GpuLink[];
  readonly problems: readonly ParseProblem[];
}

const NOT_AVAILABLE =
  /^\[?(n\/a|not supported|unknown error|insufficient permissions|gpu is lost|requested functionality has been deprecated)\]?$/i;

/** `[N/A]`, `[Not Supported]`, … and empty cells: the driver has no value. */
export const isNotAvailable = (value: string): boolean =>
  value.trim() === '' || NOT_AVAILABLE.test(value.trim());

/** Removes terminal escape sequences (`nvidia-smi topo -m` underlines its header). */
export const stripAnsi = (text: string): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

export const MIB = 1024 * 1024;
