import { DEFAULT_SLASHING_POLICY, DEFAULT_SUBNET_TRUST } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  billedGpuSeconds,
  budgetFor,
  figuresFor,
  type JobTerms,
  largestAffordable,
  priceFor,
  totalOf,
} from '../src/domain/job/pricing';

const terms = (overrides: Partial<JobTerms> = {}): JobTerms => ({
  pricing: { mode: 'fixed', pricePerGpuHour: { H100: '3600000', A100: '1800000' } },
  maxPricePerGpuHour: '3600000',
  billingIncrementSeconds: 60,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  platformFeeBps: 200,
  lowEscrowBps: 1000,
  slashing: {},
  trust: DEFAULT_SUBNET_TRUST,
  slashingPolicy: DEFAULT_SLASHING_POLICY,
  ...overrides,
});

describe('budget: max price × GPUs × max billable time + fees', () => {
  const cases: {
    name: string;
    t: JobTerms;
    gpus: number;
    maxSeconds: number;
    escrow: bigint;
    charge: bigint;
  }[] = [
    {
      name: 'whole increments',
      t: terms(),
      gpus: 4,
      maxSeconds: 3600,
      charge: 14_400_000n,
      escrow: 15_408_000n,
    },
    {
      name: 'max duration rounded up to the increment',
      t: terms(),
      gpus: 1,
      maxSeconds: 100,
      charge: 120_000n,
      escrow: 128_400n,
    },
    {
      name: 'minimum charge above the max duration',
      t: terms({ minimumChargeSeconds: 300 }),
      gpus: 1,
      maxSeconds: 30,
      charge: 300_000n,
      escrow: 321_000n,
    },
    {
      name: 'fees rounded down, never more than the rate',
      t: terms({ maxPricePerGpuHour: '7', billingIncrementSeconds: 1, minimumChargeSeconds: 0 }),
      gpus: 1,
      maxSeconds: 3600,
      charge: 7n,
      escrow: 7n,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const budget = budgetFor(c.t, c.gpus, c.maxSeconds);
      expect([budget.charge, budget.escrow]).toEqual([c.charge, c.escrow]);
      expect(budget.escrow).toBe(totalOf(budget));
    });
  }
});

describe('billed GPU-seconds', () => {
  const cases: {
    name: string;
    reading: bigint;
    gpus: number;
    t?: Partial<JobTerms>;
    max?: number;
    billed: bigint;
  }[] = [
    { name: 'nothing run, nothing billed (no minimum)', reading: 0n, gpus: 2, billed: 0n },
    { name: 'the minimum charge per GPU', reading: 10n, gpus: 2, billed: 120n },
    { name: 'rounded up to the increment per GPU', reading: 122n, gpus: 2, billed: 240n },
    { name: 'a partial GPU-second counts per GPU', reading: 121n, gpus: 2, billed: 240n },
    { name: 'capped at the max billable time', reading: 100_000n, gpus: 2, max: 600, billed: 1_200n },
    {
      name: 'per second without minimum',
      reading: 7n,
      gpus: 1,
      t: { billingIncrementSeconds: 1, minimumChargeSeconds: 0 },
      billed: 7n,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(billedGpuSeconds(c.reading, c.gpus, terms(c.t), c.max ?? 3600)).toBe(c.billed);
    });
  }
});

describe('price per provider', () => {
  const auction = terms({
    pricing: { mode: 'auction', reservePricePerGpuHour: { H100: '1000' } },
    maxPricePerGpuHour: '5000',
  });
  const cases: { name: string; t: JobTerms; gpuClass: string; agreed?: string; price: bigint }[] = [
    {
      name: 'fixed: the subnet price',
      t: terms({ maxPricePerGpuHour: '9000000' }),
      gpuClass: 'A100',
      price: 1_800_000n,
    },
    {
      name: 'fixed: never above the job max',
      t: terms({ maxPricePerGpuHour: '100' }),
      gpuClass: 'H100',
      price: 100n,
    },
    { name: 'auction: the agreed price', t: auction, gpuClass: 'H100', agreed: '2500', price: 2_500n },
    { name: 'auction: never below the reserve', t: auction, gpuClass: 'H100', agreed: '10', price: 1_000n },
    {
      name: 'auction: never above the job max',
      t: auction,
      gpuClass: 'H100',
      agreed: '99999',
      price: 5_000n,
    },
    { name: 'auction: the reserve when none was agreed', t: auction, gpuClass: 'H100', price: 1_000n },
  ];
  for (const c of cases) it(c.name, () => expect(priceFor(c.t, c.gpuClass, c.agreed)).toBe(c.price));
});

describe('rounding', () => {
  it('computes from cumulative totals, so remainders carry forward exactly', () => {
    const t = terms({
      billingIncrementSeconds: 1,
      minimumChargeSeconds: 0,
      subnetFeeBps: 333,
      platformFeeBps: 77,
    });
    const price = 7n; // 7 per GPU-hour: almost every second rounds down
    let accrued = 0n;
    for (let seconds = 1n; seconds <= 10_000n; seconds += 1n) {
      const total = totalOf(figuresFor(seconds, price, t));
      accrued += total - totalOf(figuresFor(seconds - 1n, price, t));
    }
    expect(accrued).toBe(totalOf(figuresFor(10_000n, price, t)));
  });

  it('bills what the escrow still covers, no more', () => {
    const t = terms();
    const price = 3_600_000n;
    const limit = 150_000n;
    const billed = largestAffordable(0n, 10_000n, price, t, limit);
    expect(totalOf(figuresFor(billed, price, t)) <= limit).toBe(true);
    expect(totalOf(figuresFor(billed + 1n, price, t)) > limit).toBe(true);
  });
});
