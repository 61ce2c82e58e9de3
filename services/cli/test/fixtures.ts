/** A job as the gateway answers `GET /v1/jobs/{id}` (docs/api.md `Job`), with overrides. */
import type { ApiSchemas, Job } from '../src/app/api/responses';

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

const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');

/** A held slash's id, as `subnet get` lists it. */
export const SLASH_ID = `slash-${'0a'.repeat(16)}`;

/** A proposal as the gateway answers `GET /v1/subnets/{id}/proposals/{proposalId}`, with overrides. */
export const proposalFixture = (
  overrides: Partial<ApiSchemas['SubnetProposal']> = {},
): ApiSchemas['SubnetProposal'] => ({
  proposalId: 'p-fee',
  proposerId: 'acme',
  title: 'lower the fee',
  kind: 'parameters',
  slashId: null,
  decidedBy: 'stake-vote',
  status: 'open',
  reason: null,
  yes: '2000000',
  no: '500000',
  abstain: '0',
  electorate: '10000000',
  votingEndsAt: '2030-01-01T01:00:00.000Z',
  takesEffectAt: null,
  appliedVersion: null,
  ...overrides,
});

/** A stake-vote subnet as `GET /v1/subnets/{id}` answers it: standing, delegations, proposals, slashes, health. */
export const subnetFixture = (
  overrides: Partial<ApiSchemas['SubnetEconomics']> = {},
): ApiSchemas['SubnetEconomics'] => ({
  subnetId: 'gov',
  exists: true,
  ownerId: 'owner',
  asset: 'NTX',
  version: 2,
  parameters: {
    gpuClasses: ['H100-80GB'],
    pricing: { mode: 'fixed', pricePerGpuHour: { 'H100-80GB': '2000000' } },
    billingIncrementSeconds: 60,
    minimumChargeSeconds: 60,
    subnetFeeBps: 500,
    providerMinStake: '1000000',
    slashing: { 'host-lost': 1000 },
    unbondingSeconds: 3600,
    membership: { mode: 'open' },
    trust: {
      simulatedGpus: 'refused',
      verifiedGpus: 'required',
      spotChecksPerGpuHour: 1,
      minimumIsolation: 'container',
    },
    slashingPolicy: { appealSeconds: 3600, destination: 'treasury', jailSeconds: 86400 },
    governance: {
      mode: 'stake-vote',
      quorumBps: 2000,
      thresholdBps: 6000,
      votingSeconds: 600,
      delaySeconds: 0,
    },
  },
  ownerStake: '5000000',
  treasury: '120000',
  providers: [
    {
      providerId: EDGE_A,
      stake: '2000000',
      status: 'active',
      unbondsAt: null,
      slashed: '0',
      standing: 'good',
      jailedUntil: null,
      delegated: '700000',
    },
    {
      providerId: EDGE_B,
      stake: '1800000',
      status: 'active',
      unbondsAt: null,
      slashed: '200000',
      standing: 'jailed',
      jailedUntil: '2030-01-02T00:00:00.000Z',
      delegated: '0',
    },
  ],
  totalProviderStake: '3800000',
  jobsSettled: 3,
  paidToProviders: '900000',
  subnetFees: '45000',
  lastRejection: {
    request: 'vote',
    requesterId: 'acme',
    reason: 'voting-closed',
    message: 'proposal p-old closed at 2030-01-01T00:10:00.000Z',
    rejectedAt: '2030-01-01T00:11:00.000Z',
  },
  proposals: [
    proposalFixture(),
    proposalFixture({
      proposalId: 'p-old',
      status: 'rejected',
      reason: 'quorum-not-met',
      title: 'raise the minimum',
    }),
  ],
  delegations: [
    {
      delegatorId: 'acme',
      providerId: EDGE_A,
      amount: '700000',
      status: 'active',
      unbondsAt: null,
      slashed: '0',
      rewards: '1200',
    },
  ],
  slashes: [
    {
      slashId: SLASH_ID,
      providerId: EDGE_B,
      evidence: { kind: 'host-lost', source: 'job-fault', jobId: 'j1', reference: 'j1', detail: 'host lost' },
      amount: '200000',
      shares: [{ stakerId: EDGE_B, role: 'provider', amount: '200000' }],
      destination: 'treasury',
      beneficiaryId: null,
      status: 'held',
      appealUntil: '2030-01-01T03:00:00.000Z',
      jailedUntil: '2030-01-02T00:00:00.000Z',
      appealProposalId: null,
    },
  ],
  health: {
    activeProviders: 2,
    providersInGoodStanding: 1,
    gpuSecondsSettled: 7200,
    volume: '963000',
    totalStake: '9500000',
    delegatedStake: '700000',
    slashedToTreasury: '0',
    slashedBurned: '0',
    slashedRefunded: '0',
  },
  ...overrides,
});
