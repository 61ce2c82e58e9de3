import type { CandidateProvider, PlacedAllocation } from '@gpunet/contracts';
import { createSnapshot, gangRequest, schedule } from '@gpunet/scheduling';
import { describe, expect, it } from 'vitest';
import {
  isolationView,
  placedAllocations,
  snapshotInput,
  type FundedJob,
} from '../src/domain/placement-input';
import { placementRegistry } from '../src/domain/placement-registry';
import {
  asBids,
  candidatePrices,
  gangPricing,
  GpuPriceReason,
  gpuPriceOf,
  UnpricedGpuError,
} from '../src/domain/subnet-pricing';
import { SUBNET_PRICING } from '../src/domain/subnet-pricing.filter';
import { candidate, edgeId, fundedJob } from './support/fixtures';
import { standingRow } from './support/standing';

const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100 80GB PCIe';

/** A job in an auction subnet: reserve 2.00 for H100s, max price 9.00 (the fixtures' asset, 6 decimals). */
const auctionJob = (init: Partial<FundedJob> = {}): FundedJob => {
  const base = fundedJob(init);
  return {
    ...base,
    terms: {
      ...base.terms,
      pricing: { mode: 'auction', reservePricePerGpuHour: { 'H100-80GB': '2000000' } },
    },
  };
};

describe('a GPU’s price under the job’s terms', () => {
  const fixed = fundedJob(); // H100-80GB at 3.00, max 9.00
  it.each([
    ['fixed: its class’s listed price', fixed, H100, 2_000_000n, 3_000_000n],
    ['fixed: no floor, the listed price', fixed, H100, null, 3_000_000n],
    ['fixed: a class the job does not list is paid the max price', fixed, A100, null, 9_000_000n],
    [
      'fixed: a listed price above the max price is cut to it',
      { ...fixed, terms: { ...fixed.terms, maxPricePerGpuHour: '2500000' } },
      H100,
      null,
      2_500_000n,
    ],
    ['auction: the floor is the bid', auctionJob(), H100, 2_500_000n, 2_500_000n],
    ['auction: no floor bids the reserve', auctionJob(), H100, null, 2_000_000n],
    ['auction: a bid at the max price', auctionJob(), H100, 9_000_000n, 9_000_000n],
  ] as const)('%s', (_name, job, model, floor, price) => {
    expect(gpuPriceOf(job, model, floor)).toEqual({ ok: true, pricePerGpuHour: price });
  });

  it.each([
    [
      'fixed: a floor above the subnet’s price',
      fixed,
      H100,
      3_000_001n,
      GpuPriceReason.FloorAboveFixedPrice,
      "price floor 3000001 above subnet 'public''s price 3000000 for H100-80GB",
    ],
    [
      'auction: a bid below the reserve',
      auctionJob(),
      H100,
      1_999_999n,
      GpuPriceReason.BidBelowReserve,
      "bid 1999999 below subnet 'public''s reserve 2000000 for H100-80GB",
    ],
    [
      'auction: a bid above the max price',
      auctionJob(),
      H100,
      9_000_001n,
      GpuPriceReason.BidAboveMaxPrice,
      "bid 9000001 above the job's max price 9000000",
    ],
    [
      'auction: a class with no reserve',
      auctionJob(),
      A100,
      2_500_000n,
      GpuPriceReason.NoReserve,
      "no reserve price for its model in subnet 'public''s auction",
    ],
  ] as const)('%s is not offered', (_name, job, model, floor, reason, message) => {
    expect(gpuPriceOf(job, model, floor)).toEqual({ ok: false, reason, message });
  });
});

const [A, B, C, D] = ['A', 'B', 'C', 'D'].map(edgeId) as [string, string, string, string];
const floored = (id: string, floor: string | null, gpus = 2): CandidateProvider => {
  const c = candidate(id, gpus);
  return { ...c, gpus: c.gpus.map((g) => ({ ...g, priceFloorMinor: floor })) };
};

describe('an auction clears at the highest bid among the GPUs placed', () => {
  const allocation = (nodes: [string, string[]][]): PlacedAllocation[] => [
    {
      name: 'main',
      gpuCount: nodes.reduce((n, [, g]) => n + g.length, 0),
      nodes: nodes.map(([providerId, gpuUuids], i) => ({
        providerId,
        hostId: providerId,
        gpuUuids,
        reservationId: `r-${i}`,
        ranks: gpuUuids.length,
      })),
      predictedStepUs: 1,
      pricePerHourMinor: '0',
    },
  ];
  const cheap = floored(A, '2500000');
  const dear = floored(B, '3000000');
  const reserveOnly = floored(C, null, 1);
  const gpus = (c: CandidateProvider) => c.gpus.map((g) => g.uuid);

  it('every reservation at the clearing price, with every placed GPU’s bid', () => {
    const job = auctionJob();
    const pricing = gangPricing(
      job,
      allocation([
        [A, gpus(cheap)],
        [B, gpus(dear)],
        [C, gpus(reserveOnly)],
      ]),
      candidatePrices(job, [cheap, dear, reserveOnly]),
    );
    expect(pricing.auction).toEqual({
      rule: 'uniform-highest-placed-bid',
      clearingPricePerGpuHour: '3000000',
      bids: [
        ...gpus(cheap).map((gpuUuid) => ({ providerId: A, gpuUuid, pricePerGpuHour: '2500000' })),
        ...gpus(dear).map((gpuUuid) => ({ providerId: B, gpuUuid, pricePerGpuHour: '3000000' })),
        { providerId: C, gpuUuid: gpus(reserveOnly)[0], pricePerGpuHour: '2000000' },
      ],
    });
    expect(pricing.pricePerGpuHour).toEqual({ 'r-0': '3000000', 'r-1': '3000000', 'r-2': '3000000' });
    expect(pricing.allocations[0]!.pricePerHourMinor).toBe(String(5n * 3_000_000n));
  });

  it('the clearing is the highest bid placed, not the highest offered', () => {
    const job = auctionJob();
    const pricing = gangPricing(job, allocation([[A, gpus(cheap)]]), candidatePrices(job, [cheap, dear]));
    expect(pricing.auction?.clearingPricePerGpuHour).toBe('2500000');
  });

  it('a fixed-price job has no auction; each reservation at its GPUs’ price', () => {
    const job = fundedJob();
    const pricing = gangPricing(job, allocation([[A, gpus(cheap)]]), candidatePrices(job, [cheap]));
    expect(pricing.auction).toBeNull();
    expect(pricing.pricePerGpuHour).toEqual({ 'r-0': '3000000' });
    expect(pricing.allocations[0]!.pricePerHourMinor).toBe('6000000');
  });

  it('a placed GPU without a price is a bug, not a price', () => {
    const job = auctionJob();
    expect(() => gangPricing(job, allocation([[D, ['GPU-none']]]), candidatePrices(job, [cheap]))).toThrow(
      UnpricedGpuError,
    );
  });
});

describe('subnet-pricing filter in the scheduler’s pipeline', () => {
  const job = auctionJob({ gpus: 4 });
  const candidates = [
    floored(A, '2500000'),
    floored(B, '3000000'),
    floored(C, '1000000'), // below the reserve
    floored(D, '9500000'), // above the max price
  ];
  const place = (gpus: number) => {
    const prices = candidatePrices(job, candidates);
    const offered = new Map([['main', new Set(candidates.flatMap((c) => c.gpus.map((g) => g.uuid)))]]);
    return schedule(
      createSnapshot(snapshotInput(asBids(candidates, prices), job.gpuClasses)),
      {
        id: job.jobId,
        allocations: [
          gangRequest({
            gpuCount: gpus,
            maxNodes: gpus,
            models: ['H100 80GB'],
            maxPricePerGpuHourMinor: Number(job.terms.maxPricePerGpuHour),
          }),
        ],
        edgeConstraints: [],
      },
      {
        seed: 1,
        registry: placementRegistry(offered, {
          standing: {
            subnetId: 'public',
            standings: new Map(candidates.map((c) => [c.providerId, standingRow('public', c.providerId)])),
            atMs: 0,
          },
          isolation: isolationView(job, candidates),
          prices,
          pricing: 'auction',
        }),
        explain: true,
      },
    );
  };

  it('places only bids within the reserve and the max price, and clears at the highest placed', () => {
    const r = place(4);
    if (r.code !== 'Success') throw new Error(r.message);
    const allocations = placedAllocations(r.placement, (_p, i) => `r-${i}`);
    expect(allocations[0]!.nodes.map((n) => n.providerId).sort()).toEqual([A, B].sort());
    const { auction } = gangPricing(job, allocations, candidatePrices(job, candidates));
    expect(auction?.clearingPricePerGpuHour).toBe('3000000');
  });

  it('a job that would need the refused bids says why', () => {
    const r = place(6);
    if (r.code === 'Success') throw new Error('placed on refused bids');
    expect(r.reasons.filter((x) => x.plugin === SUBNET_PRICING).map((x) => [x.reason, x.gpus])).toEqual([
      [GpuPriceReason.BidBelowReserve, 2],
    ]);
    // D's floor is also above the core's price cap, which runs first and claims it.
    expect(r.reasons.find((x) => x.plugin === 'price-cap')?.gpus).toBe(2);
    expect(r.message).toContain('bid within the reserve and the max price');
    expect(r.message).toContain("by subnet-pricing (bid 1000000 below subnet 'public''s reserve 2000000");
  });
});
