import {
  type AuctionClearing,
  type CandidateProvider,
  modelMatches,
  type PlacedAllocation,
} from '@gpunet/contracts';
import type { FundedJob } from './placement-input';

/*
 * What each candidate GPU would be paid per GPU-hour under the job's terms (pure), and what a
 * placement clears at. A fixed-price subnet pays the GPU's class its listed price (the job's max
 * price where the class is not listed, never above it: settlement's rule). An auction subnet
 * (ADR 0071) takes each GPU's sealed bid — its provider's price floor for it in the job's asset,
 * else the subnet's reserve for its class — and offers only GPUs whose bid is at least that reserve
 * and at most the job's max price; the job clears at the highest bid among the GPUs placed, and
 * every provider of the job is paid that. The reservation each edge is asked to accept carries the
 * price it will be paid, so it declines a price below its floor itself.
 */

/** Why a GPU cannot be offered under the job's pricing. */
export const GpuPriceReason = {
  /** Auction: the subnet names no reserve for the GPU's class (the job's classes do not name it). */
  NoReserve: 'NoReserve',
  BidBelowReserve: 'BidBelowReserve',
  BidAboveMaxPrice: 'BidAboveMaxPrice',
  /** Fixed price: the provider's floor is above what the subnet pays for the GPU. */
  FloorAboveFixedPrice: 'FloorAboveFixedPrice',
} as const;
export type GpuPriceReason = (typeof GpuPriceReason)[keyof typeof GpuPriceReason];

/** One GPU under the job's pricing: the price it would be paid (its bid, in an auction), or why not. */
export type GpuPrice =
  | { readonly ok: true; readonly pricePerGpuHour: bigint }
  | { readonly ok: false; readonly reason: GpuPriceReason; readonly message: string };

/** The job's class a reported model is billed as: the first of the job's classes naming it (execution's rule). */
export const jobClassOf = (model: string, jobClasses: readonly string[]): string | null =>
  jobClasses.find((c) => modelMatches(model, c)) ?? null;

const classWords = (gpuClass: string | null): string => (gpuClass === null ? 'its model' : gpuClass);

/** A GPU's price under the job's terms (`floor`: its provider's floor in the job's asset, null: none). */
export const gpuPriceOf = (job: FundedJob, model: string, floor: bigint | null): GpuPrice => {
  const { pricing } = job.terms;
  const max = BigInt(job.terms.maxPricePerGpuHour);
  const gpuClass = jobClassOf(model, job.gpuClasses);
  if (pricing.mode === 'fixed') {
    const listed = gpuClass === null ? undefined : pricing.pricePerGpuHour[gpuClass];
    const price = listed === undefined ? max : BigInt(listed) < max ? BigInt(listed) : max;
    if (floor !== null && floor > price)
      return {
        ok: false,
        reason: GpuPriceReason.FloorAboveFixedPrice,
        message: `price floor ${floor} above subnet '${job.subnetId}''s price ${price} for ${classWords(gpuClass)}`,
      };
    return { ok: true, pricePerGpuHour: price };
  }
  const listed = gpuClass === null ? undefined : pricing.reservePricePerGpuHour[gpuClass];
  if (listed === undefined)
    return {
      ok: false,
      reason: GpuPriceReason.NoReserve,
      message: `no reserve price for ${classWords(gpuClass)} in subnet '${job.subnetId}''s auction`,
    };
  const reserve = BigInt(listed);
  const bid = floor ?? reserve;
  if (bid < reserve)
    return {
      ok: false,
      reason: GpuPriceReason.BidBelowReserve,
      message: `bid ${bid} below subnet '${job.subnetId}''s reserve ${reserve} for ${gpuClass}`,
    };
  if (bid > max)
    return {
      ok: false,
      reason: GpuPriceReason.BidAboveMaxPrice,
      message: `bid ${bid} above the job's max price ${max}`,
    };
  return { ok: true, pricePerGpuHour: bid };
};

/** Every candidate GPU's price under the job's terms, by GPU uuid. */
export const candidatePrices = (
  job: FundedJob,
  candidates: readonly CandidateProvider[],
): ReadonlyMap<string, GpuPrice> => {
  const out = new Map<string, GpuPrice>();
  for (const c of candidates)
    for (const g of c.gpus)
      if (!out.has(g.uuid))
        out.set(
          g.uuid,
          gpuPriceOf(job, g.model, g.priceFloorMinor === null ? null : BigInt(g.priceFloorMinor)),
        );
  return out;
};

/** What a chosen gang is paid: per reservation the price per GPU-hour, and an auction's clearing. */
export interface GangPricing {
  /** Reservation id → the price per GPU-hour its edge is asked to accept, minor units. */
  readonly pricePerGpuHour: Readonly<Record<string, string>>;
  /** An auction job's clearing; null for a fixed-price job. */
  readonly auction: AuctionClearing | null;
  /** The allocations with `pricePerHourMinor` at the prices paid (Σ price × GPUs). */
  readonly allocations: readonly PlacedAllocation[];
}

/** Thrown when a placed GPU has no price: the pricing filter let it through (a bug). */
export class UnpricedGpuError extends Error {
  readonly code = 'UNPRICED_GPU';
  constructor(gpuUuid: string) {
    super(`placed GPU ${gpuUuid} has no price under the job's terms`);
    this.name = 'UnpricedGpuError';
  }
}

/**
 * The prices of a chosen gang, from its GPUs' prices: in an auction every reservation at the
 * clearing price (the highest bid among the GPUs placed, `uniform-highest-placed-bid`), with every
 * placed GPU's bid; at fixed prices each reservation at the highest of its GPUs' prices (a node's
 * GPUs are one model but for a mixed host).
 */
export const gangPricing = (
  job: FundedJob,
  allocations: readonly PlacedAllocation[],
  prices: ReadonlyMap<string, GpuPrice>,
): GangPricing => {
  const priceOf = (uuid: string): bigint => {
    const p = prices.get(uuid);
    if (p === undefined || !p.ok) throw new UnpricedGpuError(uuid);
    return p.pricePerGpuHour;
  };
  const nodes = allocations.flatMap((a) => a.nodes);
  const bids = nodes.flatMap((n) =>
    n.gpuUuids.map((gpuUuid) => ({ providerId: n.providerId, gpuUuid, price: priceOf(gpuUuid) })),
  );
  const highest = (xs: readonly bigint[]): bigint => xs.reduce((m, x) => (x > m ? x : m), 0n);
  const clearing = job.terms.pricing.mode === 'auction' ? highest(bids.map((b) => b.price)) : null;
  const nodePrice = (gpuUuids: readonly string[]): bigint => clearing ?? highest(gpuUuids.map(priceOf));
  const pricePerGpuHour: Record<string, string> = {};
  for (const n of nodes) pricePerGpuHour[n.reservationId] = String(nodePrice(n.gpuUuids));
  return {
    pricePerGpuHour,
    auction:
      clearing === null
        ? null
        : {
            rule: 'uniform-highest-placed-bid',
            clearingPricePerGpuHour: String(clearing),
            bids: bids.map((b) => ({
              providerId: b.providerId,
              gpuUuid: b.gpuUuid,
              pricePerGpuHour: String(b.price),
            })),
          },
    allocations: allocations.map((a) => ({
      ...a,
      pricePerHourMinor: String(
        a.nodes.reduce((sum, n) => sum + nodePrice(n.gpuUuids) * BigInt(n.gpuUuids.length), 0n),
      ),
    })),
  };
};

/**
 * An auction job's candidates as the core prices them: every GPU at its bid (a GPU without a floor
 * bids the reserve), so that the price score and the allocations' prices compare bids. Unpriced
 * GPUs keep their floor (the pricing filter leaves them out anyway).
 */
export const asBids = (
  candidates: readonly CandidateProvider[],
  prices: ReadonlyMap<string, GpuPrice>,
): CandidateProvider[] =>
  candidates.map((c) => ({
    ...c,
    gpus: c.gpus.map((g) => {
      const p = prices.get(g.uuid);
      return p?.ok === true ? { ...g, priceFloorMinor: String(p.pricePerGpuHour) } : g;
    }),
  }));
