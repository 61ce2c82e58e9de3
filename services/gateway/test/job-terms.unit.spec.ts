import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { describe, expect, it } from 'vitest';
import { deriveJobTerms, gpuClassOf } from '../src/domain/job-terms';
import { NO_BUDGET_SPEC_YAML, VALID_SPEC_JSON, VALID_SPEC_YAML } from './support/fixtures';

const spec = (text: string, format: 'yaml' | 'json' = 'yaml') => {
  const parsed = parseEnsembleSpec(text, { format });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.spec;
};

describe('deriveJobTerms', () => {
  it.each([
    {
      name: 'spec with subnet, budget and models',
      spec: spec(VALID_SPEC_YAML),
      fallback: null,
      terms: {
        subnetId: 'ai',
        asset: 'NTX',
        gpus: 4,
        gpuClasses: ['H100'],
        maxPricePerGpuHour: '2500000',
        maxDurationSeconds: 7200,
      },
    },
    {
      name: 'no subnet in the spec: the tenant default; any model: no classes',
      spec: spec(VALID_SPEC_JSON, 'json'),
      fallback: 'tenant-default',
      terms: {
        subnetId: 'tenant-default',
        asset: 'NTX',
        gpus: 2,
        gpuClasses: [],
        maxPricePerGpuHour: '1000000',
        maxDurationSeconds: 3600,
      },
    },
  ])('$name', ({ spec: s, fallback, terms }) => {
    expect(deriveJobTerms(s, fallback)).toEqual({ ok: true, terms });
  });

  it('names budget when there is none, and subnet when neither spec nor tenant has one', () => {
    const result = deriveJobTerms(spec(NO_BUDGET_SPEC_YAML.replace('subnet: ai\n', '')), null);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual(['subnet', 'budget']);
  });

  it('refuses a job without GPUs', () => {
    const s = spec(VALID_SPEC_YAML);
    const cpuOnly = {
      ...s,
      allocations: s.allocations.map((a) => ({ ...a, resources: { ...a.resources, gpus: null } })),
    };
    const result = deriveJobTerms(cpuOnly, null);
    expect(result.ok ? [] : result.errors).toEqual([
      expect.objectContaining({ path: 'allocations', code: 'MISSING_FIELD' }),
    ]);
  });

  it('rounds the duration up to whole seconds', () => {
    const s = { ...spec(VALID_SPEC_YAML), maxDurationMs: 1500 };
    const result = deriveJobTerms(s, null);
    expect(result.ok && result.terms.maxDurationSeconds).toBe(2);
  });

  it.each([
    ['H100', 'H100'],
    ['RTX 4090', 'RTX-4090'],
    ['A100-80GB', 'A100-80GB'],
    ['bad/model', null],
  ])('gpuClassOf(%s) = %s', (model, expected) => {
    expect(gpuClassOf(model)).toBe(expected);
  });
});
