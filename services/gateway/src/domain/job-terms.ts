import {
  AssetSchema,
  EntityIdSchema,
  GpuClassSchema,
  MAX_JOB_DURATION_SECONDS,
  MinorUnitsSchema,
} from '@gpunet/contracts';
import { type NormalizedSpec, totalGpus } from '@gpunet/ensemble-spec';
import type { FieldIssue } from './gateway.errors';
import type { JobView } from './job-view';

/** The terms `job.submitted` carries, derived from a normalized spec and the tenant's defaults. */
export type JobTerms = Readonly<
  Pick<JobView, 'subnetId' | 'asset' | 'gpus' | 'gpuClasses' | 'maxPricePerGpuHour' | 'maxDurationSeconds'>
>;

export type TermsResult =
  | { readonly ok: true; readonly terms: JobTerms }
  | { readonly ok: false; readonly errors: readonly FieldIssue[] };

/** Most GPUs one job may ask for (`job.submitted` allows 4096). */
export const MAX_JOB_GPUS = 4096;

/**
 * A GPU model as the spec normalizes it (`RTX 4090`, `H100-80GB`) as a class name subnets price:
 * whitespace becomes `-`. Null when no class name can be made of it.
 */
export const gpuClassOf = (model: string): string | null => {
  const candidate = model.trim().replace(/\s+/g, '-');
  return GpuClassSchema.safeParse(candidate).success ? candidate : null;
};

/**
 * What a job costs at most and where it runs, from its spec: total GPUs, the GPU classes its
 * allocations accept (empty when one accepts any model), the budget's price cap and asset, the subnet
 * (the spec's, else the tenant's default) and the spec's maximum duration in whole seconds (rounded
 * up: the budget must cover the whole duration). Every missing or unusable piece is reported with
 * its path in the spec.
 */
export const deriveJobTerms = (spec: NormalizedSpec, defaultSubnet: string | null): TermsResult => {
  const errors: FieldIssue[] = [];
  const gpus = totalGpus(spec);
  if (gpus < 1)
    errors.push({
      path: 'allocations',
      code: 'MISSING_FIELD',
      message: 'a job needs at least one GPU: give an allocation resources.gpus.count',
    });
  else if (gpus > MAX_JOB_GPUS)
    errors.push({
      path: 'allocations',
      code: 'LIMIT_EXCEEDED',
      message: `the job asks for ${gpus} GPUs; at most ${MAX_JOB_GPUS} per job`,
    });

  const classes = new Set<string>();
  let anyModel = false;
  for (const allocation of spec.allocations) {
    const requirement = allocation.resources.gpus;
    if (requirement === null) continue;
    if (requirement.models.length === 0) anyModel = true;
    requirement.models.forEach((model, i) => {
      const gpuClass = gpuClassOf(model);
      if (gpuClass === null)
        errors.push({
          path: `allocations.${allocation.name}.resources.gpus.models.${i}`,
          code: 'INVALID_VALUE',
          message: `'${model}' cannot be a GPU class (letters, digits, '.', '_', '-'; at most 64)`,
        });
      else classes.add(gpuClass);
    });
  }
  const gpuClasses = anyModel ? [] : [...classes].sort();
  if (gpuClasses.length > 64)
    errors.push({ path: 'allocations', code: 'LIMIT_EXCEEDED', message: 'at most 64 GPU models per job' });

  const subnetId = spec.subnet ?? defaultSubnet;
  if (subnetId === null)
    errors.push({
      path: 'subnet',
      code: 'MISSING_FIELD',
      message: 'name the subnet the job runs in (your API key has no default subnet)',
    });
  else if (!EntityIdSchema.safeParse(subnetId).success)
    errors.push({ path: 'subnet', code: 'INVALID_VALUE', message: 'must be a subnet id (A-Z a-z 0-9 _ -)' });

  const budget = spec.budget;
  if (budget === null)
    errors.push({
      path: 'budget',
      code: 'MISSING_FIELD',
      message: 'a job needs a budget (asset and max_price_per_gpu_hour): its escrow is computed from it',
    });
  else {
    if (!AssetSchema.safeParse(budget.asset).success)
      errors.push({ path: 'budget.asset', code: 'INVALID_VALUE', message: 'must be an asset code like NTX' });
    if (!MinorUnitsSchema.safeParse(budget.maxPricePerGpuHourMinor).success)
      errors.push({
        path: 'budget.max_price_per_gpu_hour',
        code: 'OUT_OF_RANGE',
        message: 'must be a non-negative amount',
      });
  }

  const maxDurationSeconds = Math.ceil(spec.maxDurationMs / 1000);
  if (maxDurationSeconds > MAX_JOB_DURATION_SECONDS)
    errors.push({
      path: 'max_duration',
      code: 'OUT_OF_RANGE',
      message: `at most ${MAX_JOB_DURATION_SECONDS} s (366 days)`,
    });

  if (errors.length > 0 || budget === null || subnetId === null) return { ok: false, errors };
  return {
    ok: true,
    terms: {
      subnetId,
      asset: budget.asset,
      gpus,
      gpuClasses,
      maxPricePerGpuHour: budget.maxPricePerGpuHourMinor,
      maxDurationSeconds: Math.max(1, maxDurationSeconds),
    },
  };
};
