import { type QueryResponse, SubnetEconomicsQuery } from '@gpunet/contracts';

/** A valid spec: 4 H100 GPUs on one node, with a budget, in subnet `ai`. */
export const VALID_SPEC_YAML = `apiVersion: gpunet.io/v1
kind: Ensemble
metadata:
  name: finetune-h100x4
max_duration: 2h
subnet: ai
budget:
  asset: NTX
  decimals: 6
  max_price_per_gpu_hour: '2.50'
allocations:
  trainer:
    execution:
      image: nvcr.io/nvidia/pytorch:24.05-py3
      cmd: [python, -m, train]
    resources:
      cpu: { cores: 8 }
      ram: { size: 64GiB }
      gpus:
        count: 4
        vendor: nvidia
        models: [H100]
        min_vram: 40GB
    distributed:
      framework: torchrun
      gpus_per_rank: 1
      max_nodes: 1
`;

/** The same spec as JSON. */
export const VALID_SPEC_JSON = JSON.stringify({
  apiVersion: 'gpunet.io/v1',
  kind: 'Ensemble',
  metadata: { name: 'json-job' },
  max_duration: '1h',
  budget: { asset: 'NTX', decimals: 6, max_price_per_gpu_hour: '1' },
  allocations: {
    main: {
      execution: { image: 'ghcr.io/example/train:1', cmd: ['python', 'train.py'] },
      resources: { cpu: { cores: 2 }, ram: { size: '8GiB' }, gpus: { count: 2, vendor: 'nvidia' } },
      distributed: { framework: 'torchrun', gpus_per_rank: 1, max_nodes: 1 },
    },
  },
});

/** Two errors: a wrong type on line 9 and an unknown field on line 16. */
export const INVALID_SPEC_YAML = `apiVersion: gpunet.io/v1
kind: Ensemble
metadata:
  name: broken
max_duration: 2h
budget:
  asset: NTX
  decimals: 6
  max_price_per_gpu_hour: [1]
allocations:
  trainer:
    execution:
      image: x/y:1
      cmd: [python]
    resources:
      gpuz: { count: 2 }
`;

/** Valid, but without a budget. */
export const NO_BUDGET_SPEC_YAML = VALID_SPEC_YAML.replace(/budget:\n( {2}.*\n)+/, '');

const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');

/** A held slash's id (`slash-` and 32 hex digits). */
export const SLASH_ID = `slash-${'0a'.repeat(16)}`;

/** A stake-vote subnet's parameters, as a member would propose them. */
export const SUBNET_PARAMETERS = {
  gpuClasses: ['H100-80GB'],
  pricing: { mode: 'fixed', pricePerGpuHour: { 'H100-80GB': '2000000' } },
  billingIncrementSeconds: 60,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  providerMinStake: '1000000',
  slashing: { 'host-lost': 1000 },
  unbondingSeconds: 3600,
  membership: { mode: 'open' },
  governance: {
    mode: 'stake-vote',
    quorumBps: 2000,
    thresholdBps: 6000,
    votingSeconds: 600,
    delaySeconds: 0,
  },
};

type Economics = QueryResponse<typeof SubnetEconomicsQuery>;

/** Settlement's answer for a subnet it does not know. */
export const unknownSubnetFixture = (subnetId: string): Economics => ({
  subnetId,
  exists: false,
  ownerId: null,
  asset: null,
  version: 0,
  parameters: null,
  ownerStake: '0',
  treasury: '0',
  providers: [],
  totalProviderStake: '0',
  jobsSettled: 0,
  paidToProviders: '0',
  subnetFees: '0',
});

/**
 * Settlement's view of a stake-vote subnet: an open and a rejected proposal, tenant-alice's
 * delegations to two providers (tenant-bob's to one), a held slash, a vote of tenant-alice's it refused.
 */
export const subnetEconomicsFixture = (subnetId: string): Economics => ({
  subnetId,
  exists: true,
  ownerId: 'tenant-owner',
  asset: 'NTX',
  version: 2,
  parameters: SubnetEconomicsQuery.response.shape.parameters.parse(SUBNET_PARAMETERS)!,
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
      delegated: '300000',
    },
  ],
  totalProviderStake: '3800000',
  jobsSettled: 3,
  paidToProviders: '900000',
  subnetFees: '45000',
  lastRejection: {
    request: 'vote',
    requesterId: 'tenant-alice',
    reason: 'voting-closed',
    message: 'proposal p-old closed at 2030-01-01T00:10:00.000Z',
    rejectedAt: '2030-01-01T00:11:00.000Z',
  },
  proposals: [
    {
      proposalId: 'p-fee',
      proposerId: 'tenant-owner',
      title: 'lower the fee',
      kind: 'parameters',
      slashId: null,
      decidedBy: 'stake-vote',
      status: 'open',
      reason: null,
      yes: '2000000',
      no: '0',
      abstain: '0',
      electorate: '10800000',
      votingEndsAt: '2030-01-01T01:00:00.000Z',
      takesEffectAt: null,
      appliedVersion: null,
    },
    {
      proposalId: 'p-old',
      proposerId: EDGE_A,
      title: 'raise the minimum stake',
      kind: 'parameters',
      slashId: null,
      decidedBy: 'stake-vote',
      status: 'rejected',
      reason: 'quorum-not-met',
      yes: '100',
      no: '0',
      abstain: '0',
      electorate: '10800000',
      votingEndsAt: '2030-01-01T00:10:00.000Z',
      takesEffectAt: null,
      appliedVersion: null,
    },
  ],
  delegations: [
    {
      delegatorId: 'tenant-alice',
      providerId: EDGE_A,
      amount: '700000',
      status: 'active',
      unbondsAt: null,
      slashed: '0',
      rewards: '1200',
    },
    {
      delegatorId: 'tenant-alice',
      providerId: EDGE_B,
      amount: '200000',
      status: 'unbonding',
      unbondsAt: '2030-01-01T02:00:00.000Z',
      slashed: '20000',
      rewards: '0',
    },
    {
      delegatorId: 'tenant-bob',
      providerId: EDGE_B,
      amount: '100000',
      status: 'active',
      unbondsAt: null,
      slashed: '10000',
      rewards: '0',
    },
  ],
  slashes: [
    {
      slashId: SLASH_ID,
      providerId: EDGE_B,
      evidence: {
        kind: 'host-lost',
        source: 'job-fault',
        jobId: 'job-1',
        reference: 'job-1',
        detail: 'the host stopped answering',
      },
      amount: '230000',
      shares: [
        { stakerId: EDGE_B, role: 'provider', amount: '200000' },
        { stakerId: 'tenant-alice', role: 'delegator', amount: '20000' },
        { stakerId: 'tenant-bob', role: 'delegator', amount: '10000' },
      ],
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
    totalStake: '9800000',
    delegatedStake: '1000000',
    slashedToTreasury: '0',
    slashedBurned: '0',
    slashedRefunded: '0',
  },
});
