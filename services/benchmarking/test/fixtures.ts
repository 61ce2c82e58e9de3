import { type BenchmarkProfile, BenchmarkProfileSchema } from '@gpunet/contracts';
import { simulatedProfile } from '@gpunet/edge-bench';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Claim } from '../src/domain/verification';

export const PROVIDER = `U${'P'.repeat(55)}`;
export const T0 = '2030-01-01T00:00:00.000Z';
export const T1 = '2030-01-01T00:05:00.000Z';
export const DEADLINE = '2030-01-01T00:10:00.000Z';

export const h100Claim = (count = 1, simulated = true): Claim => ({
  simulated,
  gpus: Array.from({ length: count }, (_, i) => ({
    index: i,
    uuid: `SIM-nvidia-${i}`,
    model: 'NVIDIA H100 80GB HBM3',
    vramBytes: 80 * 1024 ** 3,
  })),
});

/** A simulated edge's profile for the claim, performing like `behavesLike` (default: what it claims). */
export const simulatedProfileFor = (
  claim: Claim,
  behavesLike?: string,
  profileId = 'profile-1',
): BenchmarkProfile =>
  simulatedProfile({
    gpus: claim.gpus.map((g) => ({ ...g, vendor: 'nvidia' as const })),
    declared: behavesLike === undefined ? undefined : () => ({ behavesLike }),
    rng: () => 0.5,
    nowMs: Date.parse(T1),
    ttlMs: 7 * 24 * 3600_000,
    profileId,
  });

const GPU_BENCH = resolve(import.meta.dirname, '../../../tools/gpu-bench/fixtures');
export const profileFixture = (name: string): BenchmarkProfile =>
  BenchmarkProfileSchema.parse(JSON.parse(readFileSync(resolve(GPU_BENCH, name), 'utf8')));
