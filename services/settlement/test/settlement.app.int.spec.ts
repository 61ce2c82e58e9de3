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
  SettlementBalancesQuery,
  SimulatedChainDepositRequest,
  SubnetCreateRequested,
  SubnetEconomicsQuery,
  SubnetJoinRequested,
  UsageReported,
  WithdrawalRequested,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import {
  EventCollector,
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
} from '@gpunet/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTLEMENT_RUNTIME, SettlementModule, type SettlementRuntime } from '../src/app/settlement.module';
import { SimulatedChainAdapter } from '../src/infra/chain/simulated-chain.adapter';

/*
 * Settlement as a Nest application on real NATS and Postgres: deposits through the simulated chain,
 * a subnet, a funded job metered and settled from messages on the other services' streams, a
 * rejected job, a slashed provider, a withdrawal through the chain, reconciliation, and the queries.
 */

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

describe('settlement service (Nest, NATS, Postgres, simulated chain)', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  let app: INestApplicationContext;
  let runtime: SettlementRuntime;
  const chain = new SimulatedChainAdapter({ assets: ['NTX'], confirmationsRequired: 2 });
  const errors: { error: unknown; context: string }[] = [];
  const published = new EventCollector<Envelope>('settlement events');

  const publish = async <D extends MessageDefinition>(def: D, data: InputOf<D>): Promise<Envelope> => {
    const envelope = buildEnvelope(def, data, { streamId: 'test' }) as Envelope;
    await runtime.nats.js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
    return envelope;
  };
  const query = { prefix: '', timeoutMs: 10_000 };

  beforeAll(async () => {
    pg = await usePostgres({ label: 'settlement_app' });
    nats = await useNats({ label: 'settlement_app' });
    query.prefix = nats.prefix;
    app = await NestFactory.createApplicationContext(
      SettlementModule.forRoot({
        config: {
          databaseUrl: pg.connectionString,
          schema: pg.schema,
          natsUrl: String(nats.servers),
          prefix: nats.prefix,
          economy: { platformFeeBps: 200, lowEscrowBps: 1_000, minSubnetCreationStake: 1_000n },
          chain: 'simulated',
          assets: ['NTX'],
          chainPassMs: 0,
        },
        chain,
        faucet: chain,
        batchSize: 16,
        onError: (error, context) => errors.push({ error, context }),
      }),
      { logger: false },
    );
    await app.init();
    runtime = app.get<SettlementRuntime>(SETTLEMENT_RUNTIME);
    nats.nc.subscribe(prefixSubject(nats.prefix, 'settlement.>'), {
      callback: (_, msg) => published.push(msg.json<Envelope>()),
    });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await nats?.cleanup();
    await pg?.drop();
  }, 60_000);

  it('credits confirmed deposits once, and only once they are confirmed', async () => {
    chain.deposit('tenant', 'NTX', 100_000_000_000n);
    chain.deposit('owner', 'NTX', 50_000n);
    chain.deposit('p1', 'NTX', 1_000n);
    chain.mine(1);
    expect((await runtime.chainPass()).deposits).toBe(0);
    chain.mine(1);
    expect((await runtime.chainPass()).deposits).toBe(3);
    expect((await runtime.chainPass()).deposits).toBe(0);
    const { accounts } = await askQuery(nats.nc, SettlementBalancesQuery, { ownerId: 'tenant' }, query);
    expect(accounts.map((a) => [a.accountId, a.available])).toEqual([['NTX:wallet:tenant', '100000000000']]);
  });

  it('takes development deposits on the simulated chain, credited before the reply', async () => {
    const reply = await askQuery(
      nats.nc,
      SimulatedChainDepositRequest,
      { ownerId: 'dev-tenant', asset: 'NTX', amount: '2500' },
      query,
    );
    expect(reply.chainTxId).toMatch(/^sim-tx-/);
    expect(reply.available).toBe('2500');
    const again = await askQuery(
      nats.nc,
      SimulatedChainDepositRequest,
      { ownerId: 'dev-tenant', asset: 'NTX', amount: '500' },
      query,
    );
    expect(again.available).toBe('3000');
    await expect(
      askQuery(
        nats.nc,
        SimulatedChainDepositRequest,
        { ownerId: 'dev-tenant', asset: 'ZZZ', amount: '1' },
        query,
      ),
    ).rejects.toThrow(/ZZZ/);
    // The refusal is reported like every failed request (and nothing else went wrong).
    expect(errors.splice(0).map((e) => e.context)).toEqual([
      'query settlement.simulated-chain.deposit failed',
    ]);
  });

  it('creates a subnet, locking the owner stake, and lets a provider join', async () => {
    await publish(SubnetCreateRequested, {
      subnetId: 'sub',
      ownerId: 'owner',
      asset: 'NTX',
      stake: '20000',
      parameters: PARAMETERS,
      requestedAt: '2030-01-01T00:00:00Z',
    });
    await publish(SubnetJoinRequested, {
      subnetId: 'sub',
      providerId: 'p1',
      stake: '1000',
      requestedAt: '2030-01-01T00:00:00Z',
    });
    const economics = await waitFor(
      async () => {
        const e = await askQuery(nats.nc, SubnetEconomicsQuery, { subnetId: 'sub' }, query);
        return e.providers.length === 1 ? e : undefined;
      },
      { description: 'the subnet with its provider', timeoutMs: 20_000 },
    );
    expect(economics).toMatchObject({
      exists: true,
      ownerId: 'owner',
      version: 1,
      ownerStake: '20000',
      totalProviderStake: '1000',
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
    const statement = await askQuery(nats.nc, JobStatementQuery, { jobId: 'job-1' }, query);
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
    const sent = await runtime.chainPass();
    expect(sent.withdrawalsCompleted).toBe(0);
    expect(sent.mismatches).toEqual([]);
    chain.mine(2);
    const pass = await runtime.chainPass();
    expect(pass.withdrawalsCompleted).toBe(1);
    expect(pass.mismatches).toEqual([]);
    const { entries } = await askQuery(
      nats.nc,
      AccountStatementQuery,
      { accountId: 'NTX:payable:p1' },
      query,
    );
    expect(entries.map((e) => `${e.direction}:${e.kind}:${e.code}`)).toContain(
      'debit:post-pending:withdrawal',
    );
  }, 60_000);

  it('raises a reconciliation mismatch when custody moves behind the ledger', async () => {
    chain.drift('NTX', -7n);
    const pass = await runtime.chainPass();
    expect(pass.mismatches.map((m) => m.data)).toEqual([
      expect.objectContaining({ kind: 'custody-mismatch', difference: '-7', asset: 'NTX' }),
    ]);
    await published.waitFor((e) => e.type === 'ledger.reconciliation-mismatched', { timeoutMs: 20_000 });
    expect(errors).toEqual([]);
  });
});
