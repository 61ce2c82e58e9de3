import { DEFAULT_SLASHING_POLICY, DEFAULT_SUBNET_TRUST } from '@gpunet/contracts';
import type { SubnetParameters } from '../../src/domain/job/job-settlement.decider';

export const AT = '2030-01-01T00:00:00.000Z';

/** A fixed-price H100 subnet of two allowed providers, 1 per GPU-second, 10 % subnet fee. */
export const PARAMETERS: SubnetParameters = {
  gpuClasses: ['H100'],
  pricing: { mode: 'fixed', pricePerGpuHour: { H100: '3600' } },
  billingIncrementSeconds: 1,
  minimumChargeSeconds: 0,
  subnetFeeBps: 1000,
  providerMinStake: '100',
  slashing: { 'host-lost': 2500, 'rank-crashed': 10_000 },
  unbondingSeconds: 3600,
  membership: { mode: 'allowlist', providers: ['p1', 'p2'] },
  trust: DEFAULT_SUBNET_TRUST,
  slashingPolicy: DEFAULT_SLASHING_POLICY,
  governance: { mode: 'owner' },
};
