import {
  AccountStatementQuery,
  buildEnvelope,
  type Envelope,
  type InputOf,
  JobCompleted,
  JobFailed,
  JobStatementQuery,
  JobSubmitted,
  type MessageDefinition,
  prefixSubject,
  type QueryDefinition,
  type QueryRequest,
  type QueryResponse,
  SettlementBalancesQuery,
  SimulatedChainDepositRequest,
  SubnetCreateRequested,
  SubnetEconomicsQuery,
  SubnetJoinRequested,
  SubnetParametersUpdateRequested,
  UsageDisputed,
  UsageReported,
  WithdrawalRequested,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { EventCollector, waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCHMARKING_CONSUMER, EXECUTION_CONSUMER, GATEWAY_CONSUMER } from '../src/app/settlement.consumers';
import { SimulatedChainAdapter } from '../src/infra/chain/simulated-chain.adapter';
import { type SettlementUnderTest, startSettlement } from './support/service';

/*
 * Settlement booted as in production (runService, the JetStream transport) on real NATS and
 * Postgres: deposits through the simulated chain, a subnet, a funded job metered and settled from
 * messages on the other services' streams, a rejected job, a slashed provider, a withdrawal through
 * the chain, reconciliation, and the queries.
 */

/** An edge id (a public user nkey): the id execution knows a provider by. */
const EDGE = `U${'A'.repeat(55)}`;

const PARAMETERS = {
  gpuClasses: ['H100'],
  pricing: { mode: 'fixed' as const, pricePerGpuHour: { H100: '3600000' } },
  billingIncrementSeconds: 60,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  providerMinStake: '100',
  slashing: { 'host-lost': 5_000 },
  unbondingSeconds: 3600,
  membership: { mode: 'open' as const },
};

describe('settlement service (runService, NATS, Postgres, simulated chain)', () => {
  let s: SettlementUnderTest;
  const chain = new SimulatedChainAdapter({ assets: ['NTX'], confirmationsRequired: 2 });
  const published = new EventCollector<Envelope>('settlement events');

  const publish = async <D extends MessageDefinition>(
    def: D,
    data: InputOf<D>,
    streamId = 'test',
  ): Promise<Envelope> => {
    const envelope = buildEnvelope(def, data, { streamId }) as Envelope;
    await s.eventing.nats.js.publish(def.subject(undefined, s.nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
    return envelope;
  };
  /** Asks as another service would: on its own connection. */
  const ask = <Q extends QueryDefinition>(def: Q, request: QueryRequest<Q>): Promise<QueryResponse<Q>> =>
    askQuery(s.nats.nc, def, request, { prefix: s.nats.prefix, timeoutMs: 10_000 });

  beforeAll(async () => {
    s = await startSettlement('settlement_app', { chain, faucet: true, batchSize: 16 });
    s.nats.nc.subscribe(prefixSubject(s.nats.prefix, 'settlement.>'), {
      callback: (_, msg) => published.push(msg.json<Envelope>()),
    });
  }, 60_000);

  afterAll(() => s?.close(), 60_000);

  it('serves its three durable consumers and its queries on the JetStream transport', () => {
    const described = s.service.transport!.describe();
    expect(described.consumers.map((c) => [c.name, c.stream])).toEqual([
      [GATEWAY_CONSUMER, 'GATEWAY'],
      [EXECUTION_CONSUMER, 'EXECUTION'],
      [BENCHMARKING_CONSUMER, 'BENCHMARKING'],
    ]);
    expect(described.queries).toEqual([
      'settlement.balances',
      'settlement.account-statement',
      'settlement.job-statement',
      'settlement.subnet-economics',
      'settlement.simulated-chain.deposit',
    ]);
  });

  it('credits confirmed deposits once, and only once they are confirmed', async () => {
    chain.deposit('tenant', 'NTX', 100_000_000_000n);
    chain.deposit('owner', 'NTX', 50_000n);
    chain.deposit('p1', 'NTX', 1_000n);
    chain.deposit('p2', 'NTX', 1_000n);
    chain.mine(1);
    expect((await s.watcher.chainPass()).deposits).toBe(0);
    chain.mine(1);
    expect((await s.watcher.chainPass()).deposits).toBe(4);
    expect((await s.watcher.chainPass()).deposits).toBe(0);
    const { accounts } = await ask(SettlementBalancesQuery, { ownerId: 'tenant' });
    expect(accounts.map((a) => [a.accountId, a.available])).toEqual([['NTX:wallet:tenant', '100000000000']]);
  });

  it('takes development deposits on the simulated chain, credited before the reply', async () => {
    const reply = await ask(SimulatedChainDepositRequest, {
      ownerId: 'dev-tenant',
      asset: 'NTX',
      amount: '2500',
    });
    expect(reply.chainTxId).toMatch(/^sim-tx-/);
    expect(reply.available).toBe('2500');
    const again = await ask(SimulatedChainDepositRequest, {
      ownerId: 'dev-tenant',
      asset: 'NTX',
      amount: '500',
    });
    expect(again.available).toBe('3000');
    await expect(
      ask(SimulatedChainDepositRequest, { ownerId: 'dev-tenant', asset: 'ZZZ', amount: '1' }),
    ).rejects.toThrow(/ZZZ/);
    // The refusal is reported like every failed request (and nothing else went wrong).
    expect(s.errors.splice(0).map((e) => e.context)).toEqual([
      'query settlement.simulated-chain.deposit failed',
    ]);
  });

  it('creates a subnet, locking the owner stake, and lets providers join', async () => {
    await publish(SubnetCreateRequested, {
      subnetId: 'sub',
      ownerId: 'owner',
      asset: 'NTX',
      stake: '20000',
      parameters: PARAMETERS,
      requestedAt: '2030-01-01T00:00:00Z',
    });
    for (const providerId of ['p1', 'p2'])
      await publish(SubnetJoinRequested, {
        subnetId: 'sub',
        providerId,
        stake: '1000',
        requestedAt: '2030-01-01T00:00:00Z',
      });
    const economics = await waitFor(
      async () => {
        const e = await ask(SubnetEconomicsQuery, { subnetId: 'sub' });
        return e.providers.length === 2 ? e : undefined;
      },
      { description: 'the subnet with its providers', timeoutMs: 20_000 },
    );
    expect(economics).toMatchObject({
      exists: true,
      ownerId: 'owner',
      version: 1,
      ownerStake: '20000',
      totalProviderStake: '2000',
    });
  });

  it('funds, meters and settles a job; its statement shows every leg', async () => {
    await publish(JobSubmitted, {
      jobId: 'job-1',
      tenantId: 'tenant',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 4,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 3600,
      submittedAt: '2030-01-01T00:00:00Z',
    });
    const funded = await published.waitFor((e) => e.type === 'job.funded', { timeoutMs: 20_000 });
    // 4 GPUs × 3 600 s × 1 000 per GPU-second, plus 5 % (subnet) and 2 % (platform).
    expect(funded.data).toMatchObject({ jobId: 'job-1', escrow: '15408000', maxCharge: '14400000' });
    const usage = (seconds: number) => [
      { providerId: 'p1', gpuClass: 'H100', gpus: 2, gpuSeconds: seconds * 2 },
      { providerId: 'p2', gpuClass: 'H100', gpus: 2, gpuSeconds: seconds * 2 },
    ];
    await publish(UsageReported, {
      jobId: 'job-1',
      seq: 2,
      providers: usage(600),
      reportedAt: '2030-01-01T00:10:00Z',
    });
    await publish(UsageReported, {
      jobId: 'job-1',
      seq: 1,
      providers: usage(300),
      reportedAt: '2030-01-01T00:05:00Z',
    });
    await publish(JobCompleted, {
      jobId: 'job-1',
      usage: usage(900),
      faults: [],
      completedAt: '2030-01-01T00:15:00Z',
    });
    const settled = await published.waitFor(
      (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === 'job-1',
      {
        timeoutMs: 20_000,
      },
    );
    // 4 GPUs × 900 s × 1 000 per GPU-second, fees 5 % + 2 %.
    expect(settled.data).toMatchObject({
      outcome: 'completed',
      funded: '15408000',
      paidToProviders: '3600000',
      subnetFees: '180000',
      platformFees: '72000',
      refunded: '11556000',
    });
    const statement = await ask(JobStatementQuery, { jobId: 'job-1' });
    expect(statement).toMatchObject({
      status: 'settled',
      funded: '15408000',
      pending: '0',
      escrowBalance: '0',
      refunded: '11556000',
    });
    const kinds = statement.legs.map((l) => `${l.kind}:${l.code}`);
    expect(kinds[0]).toBe('posted:escrow-fund');
    expect(kinds.filter((k) => k.startsWith('pending:')).length).toBe(
      kinds.filter((k) => k.startsWith('post-pending:')).length,
    );
    expect(kinds.at(-1)).toBe('posted:refund');
    for (const code of ['usage-charge', 'fee-subnet', 'fee-platform'])
      expect(kinds).toContain(`post-pending:${code}`);
  }, 60_000);

  it('rejects a job it cannot fund, and says why', async () => {
    await publish(JobSubmitted, {
      jobId: 'job-poor',
      tenantId: 'nobody',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 1,
      gpuClasses: [],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 60,
      submittedAt: '2030-01-01T00:00:00Z',
    });
    const rejected = await published.waitFor((e) => e.type === 'escrow.rejected', { timeoutMs: 20_000 });
    expect(rejected.data).toMatchObject({ jobId: 'job-poor', reason: 'insufficient-funds', available: '0' });
    expect(
      published.items.some(
        (e) => e.type === 'job.funded' && (e.data as { jobId: string }).jobId === 'job-poor',
      ),
    ).toBe(false);
  });

  it('pays nothing past a fault and slashes the verified fault from the stake', async () => {
    await publish(JobSubmitted, {
      jobId: 'job-2',
      tenantId: 'tenant',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 2,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 3600,
      submittedAt: '2030-01-01T00:00:00Z',
    });
    await published.waitFor(
      (e) => e.type === 'job.funded' && (e.data as { jobId: string }).jobId === 'job-2',
      { timeoutMs: 20_000 },
    );
    await publish(UsageReported, {
      jobId: 'job-2',
      seq: 1,
      providers: [{ providerId: 'p1', gpuClass: 'H100', gpus: 2, gpuSeconds: 2_400 }],
      reportedAt: '2030-01-01T00:20:00Z',
    });
    await publish(JobFailed, {
      jobId: 'job-2',
      reason: { code: 'HOST_LOST', message: 'p1 stopped answering' },
      usage: [{ providerId: 'p1', gpuClass: 'H100', gpus: 2, gpuSeconds: 3_000 }],
      faults: [{ providerId: 'p1', kind: 'host-lost', billableGpuSeconds: 1_200, verified: true }],
      failedAt: '2030-01-01T00:25:00Z',
    });
    const settled = await published.waitFor(
      (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === 'job-2',
      {
        timeoutMs: 20_000,
      },
    );
    expect(settled.data).toMatchObject({ outcome: 'failed', paidToProviders: '1200000' });
    const slashed = await published.waitFor((e) => e.type === 'subnet.provider-slashed', {
      timeoutMs: 20_000,
    });
    expect(slashed.data).toMatchObject({
      providerId: 'p1',
      amount: '500',
      stakeBefore: '1000',
      jobId: 'job-2',
    });
  }, 60_000);

  it('pays the figures execution paid a disputed edge, never its claim; an unverified fault is not slashed', async () => {
    await publish(JobSubmitted, {
      jobId: 'job-3',
      tenantId: 'tenant',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 2,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 3600,
      submittedAt: '2030-01-01T00:00:00Z',
    });
    await published.waitFor(
      (e) => e.type === 'job.funded' && (e.data as { jobId: string }).jobId === 'job-3',
      { timeoutMs: 20_000 },
    );
    // p1's edge claimed 1 800 s per GPU; execution observed 900 s, disputed the claim and paid
    // 900 s (usage.disputed): every reading it sends carries the paid figure.
    const paid = [
      { providerId: 'p1', gpuClass: 'H100', gpus: 1, gpuSeconds: 900 },
      { providerId: 'p2', gpuClass: 'H100', gpus: 1, gpuSeconds: 900 },
    ];
    await publish(UsageReported, {
      jobId: 'job-3',
      seq: 1,
      providers: paid.map((u) => ({ ...u, gpuSeconds: 600 })),
      reportedAt: '2030-01-01T00:10:00Z',
    });
    await publish(JobCompleted, {
      jobId: 'job-3',
      usage: paid,
      faults: [
        {
          providerId: 'p1',
          kind: 'rank-crashed',
          billableGpuSeconds: 900,
          verified: false,
          detail: 'rank 0 (attempt 1) exited with signal SIGKILL',
        },
      ],
      completedAt: '2030-01-01T00:15:00Z',
    });
    const settled = await published.waitFor(
      (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === 'job-3',
      { timeoutMs: 20_000 },
    );
    // 1 800 GPU-seconds × 1 000: the paid figures, not the 2 700 the edges' claims add up to.
    expect(settled.data).toMatchObject({ outcome: 'completed', paidToProviders: '1800000' });
    expect((settled.data as { providers: unknown[] }).providers).toMatchObject([
      { providerId: 'p1', gpuSecondsBilled: 900, paid: '900000' },
      { providerId: 'p2', gpuSecondsBilled: 900, paid: '900000' },
    ]);
    const statement = await ask(JobStatementQuery, { jobId: 'job-3' });
    expect(statement).toMatchObject({ status: 'settled', pending: '0', escrowBalance: '0' });
    expect(
      published.items.some(
        (e) => e.type === 'subnet.provider-slashed' && (e.data as { jobId: string }).jobId === 'job-3',
      ),
    ).toBe(false);
  }, 60_000);

  it("bills only the subnet's members: a non-member's usage accrues nothing and is refunded", async () => {
    await publish(JobSubmitted, {
      jobId: 'job-nm',
      tenantId: 'tenant',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 2,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 3600,
      submittedAt: '2030-01-01T00:00:00Z',
    });
    await published.waitFor(
      (e) => e.type === 'job.funded' && (e.data as { jobId: string }).jobId === 'job-nm',
      { timeoutMs: 20_000 },
    );
    // p3 never joined the subnet.
    const usage = (seconds: number) => [
      { providerId: 'p1', gpuClass: 'H100', gpus: 1, gpuSeconds: seconds },
      { providerId: 'p3', gpuClass: 'H100', gpus: 1, gpuSeconds: seconds },
    ];
    await publish(
      UsageReported,
      { jobId: 'job-nm', seq: 1, providers: usage(300), reportedAt: '2030-01-01T00:05:00Z' },
      'exec-job-nm',
    );
    await publish(
      JobCompleted,
      { jobId: 'job-nm', usage: usage(600), faults: [], completedAt: '2030-01-01T00:10:00Z' },
      'exec-job-nm',
    );
    const settled = await published.waitFor(
      (e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === 'job-nm',
      { timeoutMs: 20_000 },
    );
    // Escrow 2 GPUs × 3 600 s × 1 000 + 7 % = 7 704 000; p1's 600 GPU-seconds + 7 % are spent.
    expect(settled.data).toMatchObject({
      funded: '7704000',
      paidToProviders: '600000',
      subnetFees: '30000',
      platformFees: '12000',
      refunded: '7062000',
      providers: [{ providerId: 'p1', paid: '600000' }],
    });
    const metered = published.items.filter(
      (e) => e.type === 'usage.metered' && (e.data as { jobId: string }).jobId === 'job-nm',
    );
    expect(metered.map((e) => (e.data as { notMembers?: string[] }).notMembers)).toEqual([['p3'], ['p3']]);
    const statement = await ask(JobStatementQuery, { jobId: 'job-nm' });
    expect(statement).toMatchObject({
      status: 'settled',
      pending: '0',
      escrowBalance: '0',
      refunded: '7062000',
    });
    expect(statement.legs.some((l) => l.creditAccountId === 'NTX:payable:p3')).toBe(false);
  }, 60_000);

  it("slashes a lost usage dispute by the job's pinned table, once the job is known; never where the table has no price", async () => {
    // A provider is known by its edge id (the dispute names it so): it joins like any other.
    await ask(SimulatedChainDepositRequest, { ownerId: EDGE, asset: 'NTX', amount: '1000' });
    await publish(SubnetJoinRequested, {
      subnetId: 'sub',
      providerId: EDGE,
      stake: '1000',
      requestedAt: '2030-01-01T00:20:00Z',
    });
    await waitFor(
      async () =>
        (await ask(SubnetEconomicsQuery, { subnetId: 'sub' })).providers.some((p) => p.providerId === EDGE)
          ? true
          : undefined,
      { description: 'the edge joined', timeoutMs: 20_000 },
    );
    // job-1 was funded under version 1, whose table does not price usage-disputed.
    await publish(
      UsageDisputed,
      {
        jobId: 'job-1',
        providerId: EDGE,
        attempt: 1,
        rank: 0,
        edgeSeconds: 1_800,
        observedSeconds: 900,
        paidSeconds: 900,
        at: '2030-01-01T00:16:00Z',
      },
      'exec-job-1',
    );
    await publish(SubnetParametersUpdateRequested, {
      subnetId: 'sub',
      ownerId: 'owner',
      parameters: { ...PARAMETERS, slashing: { ...PARAMETERS.slashing, 'usage-disputed': 2_000 } },
      requestedAt: '2030-01-01T00:30:00Z',
    });
    await published.waitFor((e) => e.type === 'subnet.parameters-updated', { timeoutMs: 20_000 });
    // The dispute arrives before the job's submission: retried until settlement knows the job.
    const retried = s.errors.length;
    await publish(
      UsageDisputed,
      {
        jobId: 'job-d',
        providerId: EDGE,
        attempt: 2,
        rank: 1,
        edgeSeconds: 1_800,
        observedSeconds: 900,
        paidSeconds: 900,
        at: '2030-01-01T00:40:00Z',
      },
      'exec-job-d',
    );
    await waitFor(async () => (s.errors.length > retried ? true : undefined), {
      description: 'the dispute retried',
      timeoutMs: 20_000,
    });
    await publish(JobSubmitted, {
      jobId: 'job-d',
      tenantId: 'tenant',
      subnetId: 'sub',
      asset: 'NTX',
      gpus: 1,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '3600000',
      maxDurationSeconds: 600,
      submittedAt: '2030-01-01T00:35:00Z',
    });
    // Taken at once (held slashes: proposed with the evidence); either way the edge and job-d's dispute.
    const slash = await published.waitFor(
      (e) =>
        (e.type === 'subnet.provider-slashed' && (e.data as { jobId: string }).jobId === 'job-d') ||
        (e.type === 'subnet.slash-proposed' &&
          (e.data as { evidence: { jobId: string } }).evidence.jobId === 'job-d'),
      { timeoutMs: 30_000 },
    );
    expect(slash.data).toMatchObject({ subnetId: 'sub', providerId: EDGE, amount: '200' });
    if (slash.type === 'subnet.slash-proposed')
      expect(slash.data).toMatchObject({
        bps: 2_000,
        // The subnet sends slashes to its treasury: no tenant is refunded.
        destination: 'treasury',
        beneficiaryId: null,
        evidence: { kind: 'usage-disputed', source: 'usage-dispute', reference: 'job-d/2/1' },
      });
    else expect(slash.data).toMatchObject({ kind: 'usage-disputed', stakeBefore: '1000' });
    const retries = s.errors.splice(retried);
    expect(retries.length).toBeGreaterThan(0);
    for (const r of retries) expect(r.error).toMatchObject({ code: 'JOB_NOT_KNOWN_YET', jobId: 'job-d' });
    // job-1's dispute, delivered before, slashed nothing.
    const slashedFor = (await s.log()).flatMap(({ event }) =>
      event.type === 'subnet.provider-slashed' || event.type === 'subnet.slash-proposed'
        ? [JSON.stringify(event.data)]
        : [],
    );
    expect(slashedFor.filter((d) => d.includes('"job-1"'))).toEqual([]);
  }, 60_000);

  it("reports the subnet's health: members, settled activity, stake and slashes by destination", async () => {
    const settled = published.items
      .filter((e) => e.type === 'job.settled' && (e.data as { subnetId: string }).subnetId === 'sub')
      .map(
        (e) =>
          e.data as {
            paidToProviders: string;
            subnetFees: string;
            platformFees: string;
            providers: { gpuSecondsBilled: number }[];
          },
      );
    expect(settled).toHaveLength(4); // job-1, job-2, job-3, job-nm
    const { health } = await ask(SubnetEconomicsQuery, { subnetId: 'sub' });
    expect(health).toEqual({
      activeProviders: 3,
      providersInGoodStanding: 3,
      gpuSecondsSettled: settled.reduce(
        (sum, d) => sum + d.providers.reduce((t, p) => t + p.gpuSecondsBilled, 0),
        0,
      ),
      volume: settled
        .reduce(
          (sum, d) => sum + BigInt(d.paidToProviders) + BigInt(d.subnetFees) + BigInt(d.platformFees),
          0n,
        )
        .toString(),
      // The owner's 20 000, p1's 1 000 less its 500 slash, p2's 1 000, the edge's 1 000 less 200.
      totalStake: '22300',
      delegatedStake: '0',
      slashedToTreasury: '700',
      slashedBurned: '0',
      slashedRefunded: '0',
    });
    // 3 600 + 1 200 + 1 800 + 600 GPU-seconds.
    expect(health?.gpuSecondsSettled).toBe(7_200);
  });

  it('withdraws through the chain: held, sent, posted on confirmation; reconciliation agrees', async () => {
    await publish(WithdrawalRequested, {
      withdrawalId: 'w-1',
      ownerId: 'p1',
      source: 'payable',
      asset: 'NTX',
      amount: '1000000',
      destination: 'addr_test1qpx',
      requestedAt: '2030-01-01T01:00:00Z',
    });
    await published.waitFor((e) => e.type === 'withdrawal.held', { timeoutMs: 20_000 });
    const sent = await s.watcher.chainPass();
    expect(sent.withdrawalsCompleted).toBe(0);
    expect(sent.mismatches).toEqual([]);
    chain.mine(2);
    const pass = await s.watcher.chainPass();
    expect(pass.withdrawalsCompleted).toBe(1);
    expect(pass.mismatches).toEqual([]);
    const { entries } = await ask(AccountStatementQuery, { accountId: 'NTX:payable:p1' });
    expect(entries.map((e) => `${e.direction}:${e.kind}:${e.code}`)).toContain(
      'debit:post-pending:withdrawal',
    );
  }, 60_000);

  it('raises a reconciliation mismatch when custody moves behind the ledger', async () => {
    chain.drift('NTX', -7n);
    const pass = await s.watcher.chainPass();
    expect(pass.mismatches.map((m) => m.data)).toEqual([
      expect.objectContaining({ kind: 'custody-mismatch', difference: '-7', asset: 'NTX' }),
    ]);
    await published.waitFor((e) => e.type === 'ledger.reconciliation-mismatched', { timeoutMs: 20_000 });
    expect(s.errors).toEqual([]);
  });
});
