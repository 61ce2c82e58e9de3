import { type BenchmarkProfile, type ClaimCheck, MATMUL_PRECISIONS } from '@gpunet/contracts';
import { findReference } from '@gpunet/edge-bench';

/** A GPU as the provider's inventory claims it. */
export interface ClaimedGpu {
  readonly index: number;
  readonly uuid: string;
  readonly model: string;
  readonly vramBytes: number;
}

/** What a provider claims: its GPUs, and whether they are declared (simulated) rather than detected. */
export interface Claim {
  readonly simulated: boolean;
  readonly gpus: readonly ClaimedGpu[];
}

export interface Verification {
  readonly passed: readonly ClaimCheck[];
  readonly failed: readonly ClaimCheck[];
}

/** Reported memory may sit a little below the data sheet (reserved areas, ECC, MIB vs GB). */
export const MEMORY_TOLERANCE = 0.9;

const METRIC = {
  fp32: 'matmul-fp32-tflops',
  tf32: 'matmul-tf32-tflops',
  fp16: 'matmul-fp16-tflops',
  bf16: 'matmul-bf16-tflops',
} as const;

const round = (x: number): number => Number(x.toPrecision(6));

const compare = (
  subject: string,
  claimed: string,
  reference: string,
  metric: ClaimCheck['metric'],
  published: number,
  floor: number,
  measured: number | null,
): ClaimCheck => ({
  subject,
  claimed,
  reference,
  metric,
  published,
  expectedMin: round(published * floor),
  measured,
  ratio: measured === null ? null : round(measured / published),
  verdict: measured === null ? 'missing' : measured >= published * floor ? 'ok' : 'below-tolerance',
});

/**
 * Compares a provider's claim with a benchmark profile. Every claimed GPU must be present in the
 * profile (by uuid, else by index), measure at least `tolerance` × the published figure of its model
 * for each precision and for memory bandwidth the model has, and show at least 90% of the claimed
 * memory. A GPU of a model outside the reference table can only be checked for presence and memory
 * (its other checks are `unverifiable`, never failures). A figure the run did not produce is
 * `missing` — no evidence either way — unless a GPU produced none at all. A detected (not simulated)
 * inventory whose profile is `simulated` fails: real hardware must be measured.
 */
export const verifyClaim = (claim: Claim, profile: BenchmarkProfile): Verification => {
  const checks: ClaimCheck[] = [];
  const failures = new Set<ClaimCheck>();
  const gpuDevices = profile.devices.filter((d) => d.kind !== 'cpu');
  checks.push({
    subject: 'host',
    claimed: String(claim.gpus.length),
    reference: null,
    metric: 'device-count',
    published: claim.gpus.length,
    expectedMin: claim.gpus.length,
    measured: gpuDevices.length,
    ratio: claim.gpus.length === 0 ? null : round(gpuDevices.length / claim.gpus.length),
    verdict: gpuDevices.length >= claim.gpus.length ? 'ok' : 'below-tolerance',
  });
  for (const gpu of claim.gpus) {
    const device =
      gpuDevices.find((d) => d.uuid === gpu.uuid) ??
      gpuDevices.find((d) => d.uuid === null && d.index === gpu.index);
    const present: ClaimCheck = {
      subject: gpu.uuid,
      claimed: gpu.model,
      reference: null,
      metric: 'device-present',
      published: null,
      expectedMin: null,
      measured: null,
      ratio: null,
      verdict: device === undefined || (!claim.simulated && device.kind === 'simulated') ? 'missing' : 'ok',
    };
    checks.push(present);
    if (present.verdict !== 'ok') {
      failures.add(present);
      continue;
    }
    const measuredMemory = device!.memoryBytes;
    const memory: ClaimCheck = {
      subject: gpu.uuid,
      claimed: gpu.model,
      reference: null,
      metric: 'memory-bytes',
      published: gpu.vramBytes,
      expectedMin: Math.floor(gpu.vramBytes * MEMORY_TOLERANCE),
      measured: measuredMemory,
      ratio: measuredMemory === null || gpu.vramBytes === 0 ? null : round(measuredMemory / gpu.vramBytes),
      verdict:
        measuredMemory === null
          ? 'missing'
          : measuredMemory >= gpu.vramBytes * MEMORY_TOLERANCE
            ? 'ok'
            : 'below-tolerance',
    };
    checks.push(memory);
    const ref = findReference(gpu.model);
    if (ref === null) {
      checks.push({
        subject: gpu.uuid,
        claimed: gpu.model,
        reference: null,
        metric: 'matmul-fp32-tflops',
        published: null,
        expectedMin: null,
        measured: device!.matmulTflops.fp32,
        ratio: null,
        verdict: 'unverifiable',
      });
      continue;
    }
    const perf: ClaimCheck[] = [];
    for (const p of MATMUL_PRECISIONS) {
      const published = ref.tflops[p];
      if (published === null) continue;
      perf.push(
        compare(
          gpu.uuid,
          gpu.model,
          ref.name,
          METRIC[p],
          published,
          ref.tolerance.matmul,
          device!.matmulTflops[p],
        ),
      );
    }
    perf.push(
      compare(
        gpu.uuid,
        gpu.model,
        ref.name,
        'memory-bandwidth-gbps',
        ref.memoryBandwidthGBps,
        ref.tolerance.memoryBandwidth,
        device!.memoryBandwidthGBps,
      ),
    );
    checks.push(...perf);
    const nothingMeasured = perf.every((c) => c.verdict === 'missing');
    for (const c of perf) if (c.verdict === 'below-tolerance' || nothingMeasured) failures.add(c);
  }
  for (const c of checks) if (c.verdict === 'below-tolerance') failures.add(c);
  return { passed: checks.filter((c) => !failures.has(c)), failed: checks.filter((c) => failures.has(c)) };
};
