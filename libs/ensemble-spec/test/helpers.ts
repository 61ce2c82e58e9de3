import { stringify } from 'yaml';
import { expect } from 'vitest';
import { type NormalizedSpec, parseEnsembleSpec, type ParseResult, type SpecError } from '../src';

/* eslint-disable @typescript-eslint/no-explicit-any -- specs under test are deliberately loose JSON */
export type Loose = Record<string, any>;

/** A small valid spec: a 4-GPU torchrun gang on up to 2 nodes. Tests patch a copy of it. */
export const baseSpec = (): Loose => ({
  apiVersion: 'gpunet.io/v1',
  kind: 'Ensemble',
  metadata: { name: 'base' },
  max_duration: '2h',
  allocations: {
    trainer: {
      execution: { image: 'img:1', cmd: ['python', 'train.py'] },
      resources: {
        cpu: { cores: 4 },
        ram: { size: '16GiB' },
        gpus: { count: 4, vendor: 'nvidia', min_vram: '24GB' },
      },
      distributed: { framework: 'torchrun', max_nodes: 2, interconnect: { min_bandwidth: '10Gbps' } },
    },
  },
});

/** `baseSpec()` with `patch` applied to it (mutate in place). */
export const specWith = (patch: (s: Loose) => void): Loose => {
  const s = baseSpec();
  patch(s);
  return s;
};

/** The trainer allocation of a spec object, for patches. */
export const trainer = (s: Loose): Loose => s.allocations.trainer as Loose;

export const parseObject = (obj: unknown): ParseResult => parseEnsembleSpec(stringify(obj));

export const expectValid = (r: ParseResult): NormalizedSpec => {
  if (!r.ok)
    expect.fail(
      `expected a valid spec, got:\n${r.errors.map((e) => `${e.path}: ${e.message} [${e.code}]`).join('\n')}`,
    );
  return r.spec;
};

export interface ExpectedError {
  readonly path: string;
  readonly code: SpecError['code'];
  readonly message?: RegExp;
}

export const expectErrors = (r: ParseResult): readonly SpecError[] => {
  if (r.ok) expect.fail('expected errors, but the spec is valid');
  return r.errors;
};

/** Asserts `r` failed with (at least) an error matching `e`. */
export const expectError = (r: ParseResult, e: ExpectedError): SpecError => {
  const errors = expectErrors(r);
  const found = errors.find(
    (x) => x.path === e.path && x.code === e.code && (e.message === undefined || e.message.test(x.message)),
  );
  if (!found) {
    expect.fail(
      `no ${e.code} at ${e.path}${e.message ? ` matching ${String(e.message)}` : ''}; got:\n${errors
        .map((x) => `${x.path}: ${x.message} [${x.code}]`)
        .join('\n')}`,
    );
  }
  return found;
};

export const trainerOf = (spec: NormalizedSpec) => spec.allocations.find((a) => a.name === 'trainer')!;
