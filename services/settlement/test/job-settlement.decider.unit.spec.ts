import { DEFAULT_SLASHING_POLICY, DEFAULT_SUBNET_TRUST } from '@gpunet/contracts';
import type { PayloadOf, JobSubmitted } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type JobSettlementCommand,
  jobSettlementDecider,
  type JobSettlementEvent,
  JobNotKnownYetError,
  type SubnetParameters,
  type SubnetTermsView,
} from '../src/domain/job/job-settlement.decider';
import { jobTransfers } from '../src/domain/job/job-settlement.effects';
import { rewardShares, type StakeHolders } from '../src/domain/job/reward-shares';
import { Ledger } from '../src/domain/ledger/ledger';
import { postedOf, type Transfer } from '../src/domain/ledger/transfer';

const AT = '2030-01-01T00:00:00.000Z';
const PARAMETERS: SubnetParameters = {
  gpuClasses: ['H100', 'A100'],
  pricing: { mode: 'fixed', pricePerGpuHour: { H100: '3600000', A100: '1800000' } },
  billingIncrementSeconds: 60,
  minimumChargeSeconds: 60,
  subnetFeeBps: 500,
  providerMinStake: '0',
  slashing: { 'host-lost': 1000 },
  unbondingSeconds: 60,
  membership: { mode: 'open' },
  trust: DEFAULT_SUBNET_TRUST,
  slashingPolicy: DEFAULT_SLASHING_POLICY,
  governance: { mode: 'owner' },
};
const SUBNET: SubnetTermsView = { subnetId: 'sub', asset: 'NTX', version: 3, parameters: PARAMETERS };
const JOB: PayloadOf<typeof JobSubmitted> = {
  jobId: 'j1',
  tenantId: 't1',
  subnetId: 'sub',
  asset: 'NTX',
  gpus: 2,
  gpuClasses: ['H100'],
  maxPricePerGpuHour: '3600000',
  maxDurationSeconds: 600,
  submittedAt: AT,
  spec: null,
};
const fund = (
  overrides: Partial<Extract<JobSettlementCommand, { type: 'FundJob' }>> = {},
): JobSettlementCommand => ({
  type: 'FundJob',
  job: JOB,
  subnet: SUBNET,
  available: 10_000_000n,
  platformFeeBps: 200,
  lowEscrowBps: 1000,
  at: AT,
  ...overrides,
});

/** The events a command leads to after the given history (decided for real, not written by hand). */
const history = (...commands: JobSettlementCommand[]): JobSettlementEvent[] => {
  let state = jobSettlementDecider.initialState;
  const events: JobSettlementEvent[] = [];
  for (const c of commands) {
    for (const e of jobSettlementDecider.decide(c, state)) {
      events.push(e);
      state = jobSettlementDecider.evolve(state, e);
    }
  }
  return events;
};
const funded = () => history(fund());
const usage = (seq: number, gpuSeconds: number, providerId = 'p1', gpus = 2): JobSettlementCommand => ({
  type: 'MeterUsage',
  jobId: 'j1',
  seq,
  providers: [{ providerId, gpuClass: 'H100', gpus, gpuSeconds }],
  billable: [providerId],
  at: AT,
});

describe('job settlement: escrow at submission', () => {
  it('funds max price × GPUs × max billable time + fees, with the subnet version pinned', () => {
    // 2 GPUs × 600 s × 1 000/s = 1 200 000; + 5 % + 2 %.
    given(jobSettlementDecider)
      .when(fund())
      .then([
        {
          type: 'job.funded',
          data: {
            jobId: 'j1',
            tenantId: 't1',
            subnetId: 'sub',
            subnetVersion: 3,
            asset: 'NTX',
            gpus: 2,
            gpuClasses: ['H100'],
            maxDurationSeconds: 600,
            escrow: '1284000',
            maxCharge: '1200000',
            subnetFee: '60000',
            platformFee: '24000',
            terms: {
              pricing: { mode: 'fixed', pricePerGpuHour: { H100: '3600000' } },
              maxPricePerGpuHour: '3600000',
              billingIncrementSeconds: 60,
              minimumChargeSeconds: 60,
              subnetFeeBps: 500,
              platformFeeBps: 200,
              lowEscrowBps: 1000,
              slashing: { 'host-lost': 1000 },
              trust: DEFAULT_SUBNET_TRUST,
              slashingPolicy: DEFAULT_SLASHING_POLICY,
            },
            fundedAt: AT,
          },
        },
      ]);
  });

  const rejections: { name: string; command: JobSettlementCommand; reason: string }[] = [
    { name: 'an unknown subnet', command: fund({ subnet: null }), reason: 'unknown-subnet' },
    {
      name: 'another asset',
      command: fund({ subnet: { ...SUBNET, asset: 'GPU' } }),
      reason: 'asset-mismatch',
    },
    {
      name: 'no class in common',
      command: fund({ job: { ...JOB, gpuClasses: ['RTX4090'] } }),
      reason: 'no-allowed-gpu-class',
    },
    {
      name: 'a max price below the subnet price',
      command: fund({ job: { ...JOB, maxPricePerGpuHour: '3599999' } }),
      reason: 'price-below-subnet-price',
    },
    {
      name: 'too little in the wallet',
      command: fund({ available: 1_283_999n }),
      reason: 'insufficient-funds',
    },
  ];
  for (const r of rejections) {
    it(`rejects ${r.name}: ${r.reason}`, () => {
      const [event, ...rest] = jobSettlementDecider.decide(r.command, jobSettlementDecider.initialState);
      expect(rest).toEqual([]);
      expect(event).toMatchObject({ type: 'escrow.rejected', data: { reason: r.reason, jobId: 'j1' } });
      expect(jobTransfers(jobSettlementDecider.initialState, event!)).toEqual([]);
    });
  }

  it('funds only the affordable classes of an "any class" job', () => {
    const [event] = jobSettlementDecider.decide(
      fund({ job: { ...JOB, gpuClasses: [], maxPricePerGpuHour: '2000000' } }),
      jobSettlementDecider.initialState,
    );
    expect(event).toMatchObject({ type: 'job.funded', data: { gpuClasses: ['A100'] } });
  });

  it('does nothing for a redelivered submission', () => {
    given(jobSettlementDecider, funded()).when(fund()).then([]);
  });
});

describe('job settlement: metering', () => {
  it('waits for the submission (retryable) before metering', () => {
    given(jobSettlementDecider).when(usage(1, 100)).thenThrows(JobNotKnownYetError);
    expect(new JobNotKnownYetError('j1').retryable).toBe(true);
  });

  it('accrues pending transfers for the new cumulative figures only', () => {
    const events = history(fund(), usage(1, 120));
    const [metered] = jobSettlementDecider.decide(
      usage(2, 240),
      events.reduce(jobSettlementDecider.evolve, jobSettlementDecider.initialState),
    );
    expect(metered).toMatchObject({
      type: 'usage.metered',
      data: {
        seq: 2,
        accrued: '256800',
        remaining: '1027200',
        providers: [{ gpuSecondsBilled: 240, charge: '240000' }],
      },
    });
  });

  it('ignores a sequence number it has metered, and readings that go backwards', () => {
    given(jobSettlementDecider, history(fund(), usage(1, 240)))
      .when(usage(1, 480))
      .then([]);
    given(jobSettlementDecider, history(fund(), usage(2, 240)))
      .when(usage(1, 120))
      .then([]);
  });

  it('raises escrow.low once below the low-water mark', () => {
    const events = history(fund(), usage(1, 1_100), usage(2, 1_150), usage(3, 1_200));
    expect(events.filter((e) => e.type === 'escrow.low')).toHaveLength(1);
  });

  it('raises escrow.exhausted and bills no more than the escrow when usage outruns it', () => {
    // A replacement provider's 2 GPUs on top of the gang's 2: more than the budget covers.
    const events = history(fund(), usage(1, 1_200, 'p1'), usage(2, 1_200, 'p2'));
    const exhausted = events.find((e) => e.type === 'escrow.exhausted');
    expect(exhausted).toMatchObject({ data: { remaining: '0', unbilledGpuSeconds: 1_200 } });
    const last = events.filter((e) => e.type === 'usage.metered').at(-1)!;
    expect(last.data).toMatchObject({ accrued: '1284000', remaining: '0' });
  });
});

describe('job settlement: the end', () => {
  const settle = (
    outcome: 'completed' | 'failed',
    gpuSeconds: number,
    faults: Extract<JobSettlementCommand, { type: 'SettleJob' }>['faults'] = [],
  ): JobSettlementCommand => ({
    type: 'SettleJob',
    jobId: 'j1',
    outcome,
    usage: [{ providerId: 'p1', gpuClass: 'H100', gpus: 2, gpuSeconds }],
    faults,
    billable: ['p1'],
    stakes: new Map(),
    at: AT,
  });

  it('meters the final readings, pays them and refunds the rest', () => {
    const events = history(fund(), usage(1, 240), settle('completed', 600));
    const settled = events.at(-1)!;
    expect(settled).toMatchObject({
      type: 'job.settled',
      data: { paidToProviders: '600000', subnetFees: '30000', platformFees: '12000', refunded: '642000' },
    });
  });

  it('pays a provider at fault for its billable GPU-seconds only, with no minimum and no rounding up', () => {
    // Accrued: 1 000 GPU-s → 500 s per GPU → 540 s in 60 s increments → 1 080 GPU-s; paid: 301.
    const events = history(
      fund(),
      usage(1, 900),
      settle('failed', 1_000, [
        { providerId: 'p1', kind: 'host-lost', billableGpuSeconds: 301, verified: true },
      ]),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'job.settled',
      data: {
        paidToProviders: '301000',
        providers: [{ providerId: 'p1', gpuSecondsBilled: 301, forfeited: '779000' }],
      },
    });
  });

  it('settles once; later reports and ends change nothing', () => {
    const done = history(fund(), settle('completed', 600));
    given(jobSettlementDecider, done).when(settle('completed', 900)).then([]);
    given(jobSettlementDecider, done).when(usage(9, 1_200)).then([]);
  });

  it('posts the pending legs in order up to what is owed; the remainder returns to the escrow', () => {
    // Accrued 600 then 960 GPU-s (450 s per GPU rounds to 480); owed 700 after the fault.
    let state = jobSettlementDecider.initialState;
    const transfers = [];
    for (const e of history(
      fund(),
      usage(1, 600),
      usage(2, 900),
      settle('failed', 900, [
        { providerId: 'p1', kind: 'host-lost', billableGpuSeconds: 700, verified: false },
      ]),
    )) {
      transfers.push(...jobTransfers(state, e));
      state = jobSettlementDecider.evolve(state, e);
    }
    const charge = transfers.filter((t) => t.code === 'usage-charge');
    expect(charge.map((t) => [t.kind, t.amount])).toEqual([
      ['pending', 600_000n],
      ['pending', 360_000n],
      ['post-pending', 600_000n],
      ['post-pending', 100_000n],
    ]);
    expect(transfers.at(-1)).toMatchObject({ code: 'refund', kind: 'posted' });
  });
});

/** The ledger transfers of the events, each from the state before it. */
const transfersOf = (events: readonly JobSettlementEvent[]): Transfer[] => {
  let state = jobSettlementDecider.initialState;
  const transfers: Transfer[] = [];
  for (const e of events) {
    transfers.push(...jobTransfers(state, e));
    state = jobSettlementDecider.evolve(state, e);
  }
  return transfers;
};

const reading = (providerId: string, gpuSeconds: number) => ({
  providerId,
  gpuClass: 'H100',
  gpus: 1,
  gpuSeconds,
});
const meterOf = (
  seq: number,
  billable: string[],
  ...providers: ReturnType<typeof reading>[]
): JobSettlementCommand => ({
  type: 'MeterUsage',
  jobId: 'j1',
  seq,
  providers,
  billable,
  at: AT,
});
const settleWith = (
  usage: ReturnType<typeof reading>[],
  options: {
    billable?: string[];
    stakes?: Record<string, StakeHolders>;
    faults?: Extract<JobSettlementCommand, { type: 'SettleJob' }>['faults'];
  } = {},
): JobSettlementCommand => ({
  type: 'SettleJob',
  jobId: 'j1',
  outcome: options.faults?.length ? 'failed' : 'completed',
  usage,
  faults: options.faults ?? [],
  billable: options.billable ?? usage.map((u) => u.providerId),
  stakes: new Map(Object.entries(options.stakes ?? {})),
  at: AT,
});

describe('job settlement: only members of the subnet are billed', () => {
  it('accrues nothing to a provider that is not a member, lists it, and refunds its share to the tenant', () => {
    const events = history(
      fund(),
      meterOf(1, ['p1'], reading('p1', 120), reading('p2', 120)),
      settleWith([reading('p1', 240), reading('p2', 240)], { billable: ['p1'] }),
    );
    const metered = events.filter((e) => e.type === 'usage.metered');
    expect(
      metered.map((e) => [e.data.seq, e.data.providers.map((p) => p.providerId), e.data.notMembers]),
    ).toEqual([
      [1, ['p1'], ['p2']],
      [0, ['p1'], ['p2']],
    ]);
    // p1's 240 GPU-seconds + 5 % + 2 %; the escrow's rest, p2's usage included, goes back.
    expect(events.at(-1)).toMatchObject({
      type: 'job.settled',
      data: { paidToProviders: '240000', refunded: '1027200', providers: [{ providerId: 'p1' }] },
    });
    const transfers = transfersOf(events);
    expect(transfers.some((t) => t.creditAccountId === 'NTX:payable:p2')).toBe(false);
    expect(transfers.at(-1)).toMatchObject({ code: 'refund', amount: 1_027_200n });
  });

  it('judges membership at each metering: a provider released mid-job keeps what it accrued and accrues no more', () => {
    const events = history(
      fund(),
      meterOf(1, ['p1', 'p2'], reading('p1', 120), reading('p2', 120)),
      meterOf(2, ['p1'], reading('p1', 240), reading('p2', 240)),
      settleWith([reading('p1', 360), reading('p2', 360)], { billable: ['p1'] }),
    );
    expect(events.filter((e) => e.type === 'usage.metered').map((e) => e.data.notMembers)).toEqual([
      undefined,
      ['p2'],
      ['p2'],
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'job.settled',
      data: {
        paidToProviders: '480000',
        providers: [
          { providerId: 'p1', gpuSecondsBilled: 360, paid: '360000' },
          { providerId: 'p2', gpuSecondsBilled: 120, paid: '120000' },
        ],
      },
    });
  });

  it('meters nothing (and records no report) when no member has new usage', () => {
    given(jobSettlementDecider, funded())
      .when(meterOf(1, [], reading('p2', 120)))
      .then([]);
  });
});

describe('job settlement: delegators share the pay pro rata to stake', () => {
  const STAKES = {
    p1: {
      own: 1_000n,
      delegations: [
        { delegatorId: 'd2', amount: 250n },
        { delegatorId: 'd1', amount: 500n },
      ],
    },
  };

  it('gives each delegator the floor of its share, the remainder to the provider, as reward-share transfers', () => {
    // p1 is paid 600 000 (600 GPU-seconds); stake 1 000 + 500 + 250.
    const events = history(fund(), settleWith([reading('p1', 600)], { stakes: STAKES }));
    const settled = events.at(-1)!;
    expect(settled).toMatchObject({
      type: 'job.settled',
      data: {
        paidToProviders: '600000',
        delegatorShares: [
          { providerId: 'p1', delegatorId: 'd1', amount: '171428' },
          { providerId: 'p1', delegatorId: 'd2', amount: '85714' },
        ],
      },
    });
    const transfers = transfersOf(events);
    expect(transfers.filter((t) => t.code === 'reward-share')).toEqual([
      {
        id: 'reward-share:j1:p1:d1',
        debitAccountId: 'NTX:payable:p1',
        creditAccountId: 'NTX:payable:d1',
        amount: 171_428n,
        kind: 'posted',
        pendingId: null,
        code: 'reward-share',
        jobId: 'j1',
        at: AT,
      },
      expect.objectContaining({
        id: 'reward-share:j1:p1:d2',
        creditAccountId: 'NTX:payable:d2',
        amount: 85_714n,
      }),
    ]);
    // On a ledger: the provider keeps 342 858 (its exact 342 857.14 plus both roundings); all adds up.
    const ledger = Ledger.empty();
    ledger.apply([
      {
        id: 'deposit',
        debitAccountId: 'NTX:chain:custody',
        creditAccountId: 'NTX:wallet:t1',
        amount: 10_000_000n,
        kind: 'posted',
        pendingId: null,
        code: 'deposit',
        jobId: null,
        at: AT,
      },
    ]);
    for (const t of transfers) ledger.apply([t]);
    const posted = (id: string) => postedOf(ledger.balances(id));
    expect([posted('NTX:payable:p1'), posted('NTX:payable:d1'), posted('NTX:payable:d2')]).toEqual([
      342_858n,
      171_428n,
      85_714n,
    ]);
    // Replayed, the same ids: a redelivery moves nothing twice.
    expect(ledger.apply(transfers.filter((t) => t.code === 'reward-share'))).toEqual(['exists', 'exists']);
  });

  it('shares nothing, and lists no shares, when the provider has no delegations', () => {
    const events = history(
      fund(),
      settleWith([reading('p1', 600)], { stakes: { p1: { own: 1_000n, delegations: [] } } }),
    );
    expect(events.at(-1)!.data).not.toHaveProperty('delegatorShares');
    expect(transfersOf(events).some((t) => t.code === 'reward-share')).toBe(false);
  });

  it('shares only what a provider at fault was paid, never what it forfeited', () => {
    // Accrued 600 GPU-seconds, paid 301 after the fault: 301 000 shared 1:1 with d1.
    const events = history(
      fund(),
      settleWith([reading('p1', 600)], {
        stakes: { p1: { own: 1n, delegations: [{ delegatorId: 'd1', amount: 1n }] } },
        faults: [{ providerId: 'p1', kind: 'host-lost', billableGpuSeconds: 301, verified: true }],
      }),
    );
    expect(events.at(-1)).toMatchObject({
      data: {
        providers: [{ providerId: 'p1', paid: '301000', forfeited: '299000' }],
        delegatorShares: [{ providerId: 'p1', delegatorId: 'd1', amount: '150500' }],
      },
    });
  });

  it('shares nothing with the delegators of a provider it did not bill', () => {
    const events = history(fund(), settleWith([reading('p1', 600)], { billable: [], stakes: STAKES }));
    expect(events.at(-1)).toMatchObject({ data: { paidToProviders: '0', refunded: '1284000' } });
    expect(events.at(-1)!.data).not.toHaveProperty('delegatorShares');
  });
});

describe('reward shares (pro rata, floors, remainder to the provider)', () => {
  const cases: { name: string; paid: bigint; stakes: StakeHolders; shares: [string, bigint][] }[] = [
    { name: 'no delegations', paid: 1_000n, stakes: { own: 10n, delegations: [] }, shares: [] },
    {
      name: 'thirds: each floors, the provider keeps the rounding',
      paid: 1_000n,
      stakes: {
        own: 1n,
        delegations: [
          { delegatorId: 'a', amount: 1n },
          { delegatorId: 'b', amount: 1n },
        ],
      },
      shares: [
        ['a', 333n],
        ['b', 333n],
      ],
    },
    {
      name: 'no own stake: the delegators take all but the rounding',
      paid: 10n,
      stakes: {
        own: 0n,
        delegations: [
          { delegatorId: 'a', amount: 2n },
          { delegatorId: 'b', amount: 1n },
        ],
      },
      shares: [
        ['a', 6n],
        ['b', 3n],
      ],
    },
    {
      name: 'a share that floors to zero is left out',
      paid: 5n,
      stakes: { own: 1_000n, delegations: [{ delegatorId: 'a', amount: 1n }] },
      shares: [],
    },
    {
      name: "a delegator's two delegations count as one",
      paid: 100n,
      stakes: {
        own: 2n,
        delegations: [
          { delegatorId: 'a', amount: 1n },
          { delegatorId: 'a', amount: 1n },
        ],
      },
      shares: [['a', 50n]],
    },
    {
      name: "the provider's delegation to itself is its own stake",
      paid: 100n,
      stakes: {
        own: 1n,
        delegations: [
          { delegatorId: 'p1', amount: 2n },
          { delegatorId: 'a', amount: 1n },
        ],
      },
      shares: [['a', 25n]],
    },
    {
      name: 'nothing paid',
      paid: 0n,
      stakes: { own: 1n, delegations: [{ delegatorId: 'a', amount: 1n }] },
      shares: [],
    },
    { name: 'no stake at all', paid: 100n, stakes: { own: 0n, delegations: [] }, shares: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const shares = rewardShares('p1', c.paid, c.stakes);
      expect(shares.map((s) => [s.delegatorId, s.amount])).toEqual(c.shares);
      expect(shares.reduce((sum, s) => sum + s.amount, 0n) <= c.paid).toBe(true);
    });
  }
});
