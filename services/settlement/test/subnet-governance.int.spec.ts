import {
  buildEnvelope,
  type Envelope,
  type InputOf,
  JobSubmitted,
  type MessageDefinition,
  prefixSubject,
  ProviderChallenged,
  SubnetCreateRequested,
  SubnetDelegationRequested,
  SubnetEconomicsQuery,
  SubnetJoinRequested,
  SubnetProposalRequested,
  SubnetVoteRequested,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { EventCollector } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCHMARKING_CONSUMER } from '../src/app/settlement.consumers';
import { SimulatedChainAdapter } from '../src/infra/chain/simulated-chain.adapter';
import { SteppingClock } from './support/deliveries';
import { type SettlementUnderTest, startSettlement } from './support/service';

/*
 * ADR 0071 end to end in settlement (runService, NATS, Postgres): a stake-vote proposal passes on
 * the chain pass and the next funded job is billed at the new price; one under quorum fails; a
 * failed GPU challenge on benchmarking's stream slashes a provider and its delegator pro rata once
 * the appeal window closes, with the ledger reconciled.
 */

const START = Date.parse('2030-01-01T00:00:00.000Z');
/** Edge ids: providers are their edges' public nkeys. */
const P1 = `U${'A'.repeat(55)}`;
const P2 = `U${'B'.repeat(55)}`;
const PARAMETERS = {
  gpuClasses: ['H100'],
  pricing: { mode: 'fixed' as const, pricePerGpuHour: { H100: '3600000' } },
  billingIncrementSeconds: 60,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  providerMinStake: '100',
  slashing: { 'claim-mismatch': 1_000 },
  unbondingSeconds: 3600,
  membership: { mode: 'open' as const },
  slashingPolicy: { appealSeconds: 600, destination: 'treasury' as const, jailSeconds: 300 },
  governance: {
    mode: 'stake-vote' as const,
    quorumBps: 5_000,
    thresholdBps: 6_000,
    votingSeconds: 60,
    delaySeconds: 0,
  },
};

describe('subnet governance in settlement (runService, NATS, Postgres)', () => {
  let s: SettlementUnderTest;
  const clock = new SteppingClock(START);
  const chain = new SimulatedChainAdapter({ assets: ['NTX'], confirmationsRequired: 1 });
  const published = new EventCollector<Envelope>('settlement events');
  const at = () => clock.now().toISOString();

  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>): Promise<Envelope> => {
    const envelope = buildEnvelope(def, data, { streamId: 'test' }) as Envelope;
    await s.eventing.nats.js.publish(def.subject(undefined, s.nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
    return envelope;
  };
  const seen = (type: string, where: (data: Record<string, unknown>) => boolean = () => true) =>
    published.waitFor((e) => e.type === type && where(e.data as Record<string, unknown>), {
      timeoutMs: 20_000,
    });
  const economics = () =>
    askQuery(
      s.nats.nc,
      SubnetEconomicsQuery,
      { subnetId: 'gov' },
      { prefix: s.nats.prefix, timeoutMs: 10_000 },
    );

  beforeAll(async () => {
    s = await startSettlement('settlement_gov', { chain, clock, batchSize: 16 });
    s.nats.nc.subscribe(prefixSubject(s.nats.prefix, 'settlement.>'), {
      callback: (_, msg) => published.push(msg.json<Envelope>()),
    });
    for (const [owner, amount] of [
      ['owner', 20_000n],
      [P1, 5_000n],
      [P2, 5_000n],
      ['d1', 5_000n],
      ['tenant', 100_000_000_000n],
    ] as const)
      chain.deposit(owner, 'NTX', amount);
    chain.mine(1);
    await s.watcher.chainPass();
    await publish(SubnetCreateRequested, {
      subnetId: 'gov',
      ownerId: 'owner',
      asset: 'NTX',
      stake: '20000',
      parameters: PARAMETERS,
      requestedAt: at(),
    });
    await seen('subnet.created');
    for (const providerId of [P1, P2]) {
      await publish(SubnetJoinRequested, { subnetId: 'gov', providerId, stake: '1000', requestedAt: at() });
      await seen('subnet.provider-joined', (d) => d.providerId === providerId);
    }
    await publish(SubnetDelegationRequested, {
      subnetId: 'gov',
      delegatorId: 'd1',
      providerId: P1,
      amount: '1000',
      requestedAt: at(),
    });
    await seen('subnet.delegated');
  }, 90_000);

  afterAll(() => s?.close(), 60_000);

  it('consumes benchmarking’s stream with a durable consumer of its own', () => {
    expect(s.service.transport!.describe().consumers.map((c) => [c.name, c.stream])).toContainEqual([
      BENCHMARKING_CONSUMER,
      'BENCHMARKING',
    ]);
  });

  it('a stake-vote proposal passes on the chain pass, and the next funded job carries the new price', async () => {
    await publish(SubnetProposalRequested, {
      subnetId: 'gov',
      proposalId: 'double-price',
      proposerId: P1,
      title: 'Double the H100 price',
      change: {
        kind: 'parameters',
        parameters: { ...PARAMETERS, pricing: { mode: 'fixed', pricePerGpuHour: { H100: '7200000' } } },
      },
      requestedAt: at(),
    });
    // Electorate: owner 20 000 + providers 2 000 + delegated 1 000 = 23 000; the owner alone is quorum.
    expect((await seen('subnet.proposal-opened')).data).toMatchObject({ electorate: '23000' });
    await publish(SubnetVoteRequested, {
      subnetId: 'gov',
      proposalId: 'double-price',
      voterId: 'owner',
      choice: 'yes',
      requestedAt: at(),
    });
    await seen('subnet.vote-cast');
    clock.advance(60_000);
    expect((await s.watcher.chainPass()).subnetsStepped).toBe(1);
    expect((await seen('subnet.proposal-decided')).data).toMatchObject({
      outcome: 'passed',
      yes: '20000',
    });
    expect((await seen('subnet.parameters-updated')).data).toMatchObject({
      version: 2,
      proposalId: 'double-price',
    });
    await publish(JobSubmitted, {
      jobId: 'job-after-vote',
      tenantId: 'tenant',
      subnetId: 'gov',
      asset: 'NTX',
      gpus: 1,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '7200000',
      maxDurationSeconds: 600,
      submittedAt: at(),
    });
    const funded = await seen('job.funded', (d) => d.jobId === 'job-after-vote');
    expect(funded.data).toMatchObject({
      subnetVersion: 2,
      terms: { pricing: { mode: 'fixed', pricePerGpuHour: { H100: '7200000' } } },
    });
  }, 60_000);

  it('a proposal under quorum is rejected and changes nothing', async () => {
    await publish(SubnetProposalRequested, {
      subnetId: 'gov',
      proposalId: 'no-fee',
      proposerId: P2,
      title: 'No subnet fee',
      change: { kind: 'parameters', parameters: { ...PARAMETERS, subnetFeeBps: 0 } },
      requestedAt: at(),
    });
    await seen('subnet.proposal-opened', (d) => d.proposalId === 'no-fee');
    await publish(SubnetVoteRequested, {
      subnetId: 'gov',
      proposalId: 'no-fee',
      voterId: P2,
      choice: 'yes',
      requestedAt: at(),
    });
    await seen('subnet.vote-cast', (d) => d.proposalId === 'no-fee');
    clock.advance(60_000);
    await s.watcher.chainPass();
    expect((await seen('subnet.proposal-decided', (d) => d.proposalId === 'no-fee')).data).toMatchObject({
      outcome: 'rejected',
      reason: 'quorum-not-met',
      yes: '1000',
      electorate: '23000',
    });
    const view = await economics();
    expect(view.version).toBe(2);
    expect(view.proposals?.map((p) => [p.proposalId, p.status, p.reason])).toEqual([
      ['no-fee', 'rejected', 'quorum-not-met'],
      ['double-price', 'applied', 'threshold-met'],
    ]);
  }, 60_000);

  it('a failed challenge slashes the provider and its delegator pro rata after the appeal window, the ledger balanced', async () => {
    const challenge = {
      providerId: P1,
      challengeId: 'ch-1',
      reason: 'spot-check' as const,
      jobId: null,
      gpuUuid: 'GPU-1',
      outcome: 'failed' as const,
      evidence: {
        seed: 'a'.repeat(64),
        n: 256,
        dtype: 'fp16' as const,
        claimedTflops: 400,
        deadlineMs: 1_000,
        elapsedMs: 120,
        root: 'b'.repeat(64),
        openedRows: [3],
        failure: { kind: 'wrong-product' as const, detail: 'Freivalds check failed' },
        bytesSent: 64,
        bytesReceived: 4_096,
      },
      at: at(),
    };
    await publish(ProviderChallenged, challenge);
    // Redelivered evidence (another message, the same challenge) is one slash.
    await publish(ProviderChallenged, challenge);
    const proposed = await seen('subnet.slash-proposed');
    // 10 % of own 1 000 + delegated 1 000.
    expect(proposed.data).toMatchObject({
      providerId: P1,
      amount: '200',
      shares: [
        { stakerId: P1, role: 'provider', amount: '100' },
        { stakerId: 'd1', role: 'delegator', amount: '100' },
      ],
      evidence: { kind: 'claim-mismatch', source: 'challenge', reference: 'ch-1', jobId: null },
    });
    expect((await seen('subnet.member-standing-changed', (d) => d.standing === 'jailed')).data).toMatchObject(
      {
        providerId: P1,
      },
    );
    clock.advance(599_000);
    await s.watcher.chainPass();
    expect(published.items.some((e) => e.type === 'subnet.provider-slashed')).toBe(false);
    clock.advance(1_000);
    const pass = await s.watcher.chainPass();
    expect(pass.mismatches).toEqual([]);
    expect((await seen('subnet.provider-slashed')).data).toMatchObject({
      slashId: (proposed.data as { slashId: string }).slashId,
      amount: '200',
      jobId: null,
      destination: 'treasury',
    });
    expect(published.items.filter((e) => e.type === 'subnet.slash-proposed')).toHaveLength(1);
    const view = await economics();
    expect(view.providers.find((p) => p.providerId === P1)).toMatchObject({
      stake: '900',
      slashed: '100',
      delegated: '900',
      standing: 'good',
    });
    expect(view.delegations).toEqual([
      expect.objectContaining({
        delegatorId: 'd1',
        providerId: P1,
        amount: '900',
        slashed: '100',
        rewards: '0',
      }),
    ]);
    expect(view.treasury).toBe('200');
    expect(view.slashes).toEqual([expect.objectContaining({ status: 'taken', appealProposalId: null })]);
    const balances = await s.ledger.accounts(s.eventing.db, { asset: 'NTX' });
    const posted = (id: string) => {
      const a = balances.find((x) => x.id === id)!;
      return [a.creditsPosted - a.debitsPosted, a.debitsPending];
    };
    expect(posted(`NTX:stake:${P1}@gov`)).toEqual([900n, 0n]);
    expect(posted(`NTX:stake:d1@gov@${P1}`)).toEqual([900n, 0n]);
    expect(s.errors).toEqual([]);
  }, 60_000);
});
