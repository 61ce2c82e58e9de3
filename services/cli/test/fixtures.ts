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
