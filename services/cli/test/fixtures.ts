/** A job as the gateway answers `GET /v1/jobs/{id}` (docs/api.md `Job`), with overrides. */
import type { Job } from '../src/app/api/responses';

export const jobFixture = (overrides: Partial<Job> = {}): Job => ({
  jobId: 'j1',
  tenantId: 'acme',
  name: 'ddp',
  subnetId: 'demo',
  asset: 'NTX',
  gpus: 4,
  gpuClasses: [],
  maxPricePerGpuHour: '1000000',
  maxDurationSeconds: 600,
  status: 'completed',
  attempt: 1,
  reason: null,
  submittedAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:01:00.000Z',
  cancelRequestedAt: null,
  placement: null,
  ranks: null,
  paths: null,
  usage: { gpuSeconds: 238, final: true, seq: 2, providers: [], at: '2030-01-01T00:01:00.000Z' },
  cost: { asset: 'NTX', escrow: '700000', accrued: '277666', remaining: null, settled: null },
  ...overrides,
});

const prediction = (stepUs: number, computeUs: number) => ({
  stepUs,
  computeUs,
  commUs: stepUs - computeUs,
  intraHostUs: 0,
  intraSiteUs: 0,
  interSiteUs: stepUs - computeUs,
  slowestTflops: 900,
});

/** A placed job's explanation as the gateway serves it: two nodes over two sites, one alternative. */
export const explanationFixture = () => ({
  jobId: 'j1',
  status: 'placed',
  attempt: 1,
  explainedAt: '2030-01-01T00:00:00.000Z',
  outcome: {
    kind: 'placement',
    allocations: [
      {
        name: 'main',
        gpuCount: 2,
        nodes: [
          { providerId: 'UPROV-A', hostId: 'a0', siteId: 'site-a', gpuUuids: ['GPU-a'], ranks: 1 },
          { providerId: 'UPROV-B', hostId: 'b0', siteId: 'site-b', gpuUuids: ['GPU-b'], ranks: 1 },
        ],
        sites: 2,
        prediction: prediction(250_000, 55_000),
        pricePerHourMinor: '3000000',
        strategy: 'pack',
        stepTimeTolerance: 0.02,
        gpus: [
          {
            providerId: 'UPROV-B',
            hostId: 'b0',
            gpuUuid: 'GPU-b',
            model: 'H100-SXM',
            precision: 'bf16',
            tflops: 900,
            source: 'reference',
            measuredAt: null,
            ageMs: null,
            slowest: true,
          },
          {
            providerId: 'UPROV-A',
            hostId: 'a0',
            gpuUuid: 'GPU-a',
            model: 'H100-SXM',
            precision: 'bf16',
            tflops: 912.4,
            source: 'measured',
            measuredAt: '2029-12-31T23:57:00.000Z',
            ageMs: 180_000,
            slowest: false,
          },
        ],
        gpusOmitted: 0,
        links: [
          {
            a: 'a0',
            b: 'b0',
            scope: 'inter-site',
            rttUs: 80_200,
            rttSource: 'measured',
            bandwidthBps: 10e9,
            bandwidthSource: 'measured',
            cappedByNic: true,
            basis: 'site-measured',
            measuredAt: '2029-12-31T23:57:00.000Z',
            ageMs: 180_000,
            relayed: true,
            estimateError: null,
          },
        ],
        linksOmitted: 0,
        alternatives: [
          {
            nodes: [
              { providerId: 'UPROV-A', hostId: 'a0', siteId: 'site-a', gpus: 1 },
              { providerId: 'UPROV-C', hostId: 'c0', siteId: 'site-c', gpus: 1 },
            ],
            sites: 2,
            gpuCount: 2,
            prediction: prediction(400_000, 55_000),
            pricePerHourMinor: '2000000',
            lostOn: 'constraint',
            message: 'RTT 150 ms (estimated) between a0 and c0 exceeds max_rtt 100 ms',
            stepUsDelta: 150_000,
            priceDeltaMinor: '-1000000',
          },
        ],
      },
    ],
  },
});
