import type { JobTermsSchema } from '@gpunet/contracts';
import type { z } from 'zod';
import { bpsOf, ceilDiv, maxOf, minOf, minor, roundUpTo, SECONDS_PER_HOUR } from '../money';

/*
 * Prices are per GPU-hour in minor units; usage is GPU-seconds. Every amount is computed from
 * cumulative figures — charge(total billed seconds), fee(charge) — and an accrual is the difference
 * between two such values, so rounding never accumulates: however usage is split into reports, the
 * pieces add up to exactly what the total costs (remainders carry forward).
 */

export type JobTerms = z.output<typeof JobTermsSchema>;

/** Whole-job figures at a given billed time. */
export interface Figures {
  /** The providers' share: ⌊billed GPU-seconds × price / 3600⌋. */
  readonly charge: bigint;
  /** ⌊charge × subnetFeeBps / 10 000⌋, on top of the charge. */
  readonly subnetFee: bigint;
  /** ⌊charge × platformFeeBps / 10 000⌋, on top of the charge. */
  readonly platformFee: bigint;
}

export const totalOf = (f: Figures): bigint => f.charge + f.subnetFee + f.platformFee;

export const figuresFor = (gpuSecondsBilled: bigint, pricePerGpuHour: bigint, terms: JobTerms): Figures => {
  const charge = (gpuSecondsBilled * pricePerGpuHour) / SECONDS_PER_HOUR;
  return {
    charge,
    subnetFee: bpsOf(charge, terms.subnetFeeBps),
    platformFee: bpsOf(charge, terms.platformFeeBps),
  };
};

/** Billable seconds per GPU at most: the max duration, at least the minimum charge, in whole increments. */
export const maxBillableSecondsPerGpu = (terms: JobTerms, maxDurationSeconds: number): bigint =>
  roundUpTo(
    maxOf(BigInt(maxDurationSeconds), BigInt(terms.minimumChargeSeconds)),
    BigInt(terms.billingIncrementSeconds),
  );

export interface Budget extends Figures {
  /** What the job's escrow holds: charge + fees at the maximum price for the maximum billable time. */
  readonly escrow: bigint;
}

/**
 * The escrow a job needs: max price × GPUs × max billable time, plus fees. It covers any usage
 * execution may report within the job's shape (providers' GPUs summing to the job's, each billed at
 * most the max billable time, at most the max price), because ⌊·⌋ of a sum ≥ the sum of ⌊·⌋s.
 */
export const budgetFor = (terms: JobTerms, gpus: number, maxDurationSeconds: number): Budget => {
  const billed = maxBillableSecondsPerGpu(terms, maxDurationSeconds) * BigInt(gpus);
  const figures = figuresFor(billed, minor(terms.maxPricePerGpuHour), terms);
  return { ...figures, escrow: totalOf(figures) };
};

/** The price list of the terms: the fixed price, or the reserve price of an auction subnet. */
export const listPrice = (terms: Pick<JobTerms, 'pricing'>, gpuClass: string): bigint | undefined => {
  const table =
    terms.pricing.mode === 'fixed' ? terms.pricing.pricePerGpuHour : terms.pricing.reservePricePerGpuHour;
  const price = table[gpuClass];
  return price === undefined ? undefined : minor(price);
};

/**
 * The price per GPU-hour one provider is paid: the subnet's fixed price, or the price agreed at
 * placement for an auction (never below the reserve) — never above the job's max price.
 */
export const priceFor = (terms: JobTerms, gpuClass: string, agreed: string | undefined): bigint => {
  const max = minor(terms.maxPricePerGpuHour);
  const listed = listPrice(terms, gpuClass);
  if (terms.pricing.mode === 'fixed') return minOf(listed ?? max, max);
  const reserve = listed ?? 0n;
  const bid = agreed === undefined ? reserve : maxOf(minor(agreed), reserve);
  return minOf(bid, max);
};

/**
 * GPU-seconds billed for a cumulative reading: per GPU, at least the minimum charge, rounded up to
 * the billing increment, at most the max billable time. A provider that has not run is billed 0.
 */
export const billedGpuSeconds = (
  reading: bigint,
  gpus: number,
  terms: JobTerms,
  maxDurationSeconds: number,
): bigint => {
  if (reading <= 0n) return 0n;
  const g = BigInt(gpus);
  const perGpu = roundUpTo(
    maxOf(ceilDiv(reading, g), BigInt(terms.minimumChargeSeconds)),
    BigInt(terms.billingIncrementSeconds),
  );
  return minOf(perGpu, maxBillableSecondsPerGpu(terms, maxDurationSeconds)) * g;
};

/**
 * The largest billed time in [low, high] whose total stays within `limit` (binary search: totals
 * grow with billed time). Used when usage outruns the escrow: bill what it covers, no more.
 */
export const largestAffordable = (
  low: bigint,
  high: bigint,
  price: bigint,
  terms: JobTerms,
  limit: bigint,
): bigint => {
  let lo = low;
  let hi = high;
  while (lo < hi) {
    const mid = (lo + hi + 1n) / 2n;
    if (totalOf(figuresFor(mid, price, terms)) <= limit) lo = mid;
    else hi = mid - 1n;
  }
  return lo;
};
