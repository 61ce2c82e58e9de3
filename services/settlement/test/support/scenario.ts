import { DEFAULT_SLASHING_POLICY, DEFAULT_SUBNET_TRUST } from '@gpunet/contracts';
import {
  buildEnvelope,
  type Envelope,
  type InputOf,
  JobCancelled,
  JobCompleted,
  JobFailed,
  JobSubmitted,
  type MessageDefinition,
  type PayloadOf,
  SubnetCreateRequested,
  SubnetDelegationRequested,
  SubnetJoinRequested,
  SubnetLeaveRequested,
  SubnetParametersUpdateRequested,
  SubnetUndelegationRequested,
  UsageReported,
  WithdrawalRequested,
  type DepositConfirmed,
} from '@gpunet/contracts';
import fc from 'fast-check';
import type { SubnetParameters } from '../../src/domain/job/job-settlement.decider';

/*
 * Random but coherent settlement worlds for property tests: what the other services would emit
 * (deposits, subnets, joins, delegations, jobs with cumulative usage reports and an end,
 * withdrawals, undelegations), as a list of inputs that the harness then delivers shuffled and
 * duplicated. Jobs also name providers that never joined: their usage must not be billed.
 */

export type Input =
  | { readonly kind: 'message'; readonly envelope: Envelope }
  | { readonly kind: 'deposit'; readonly deposit: PayloadOf<typeof DepositConfirmed> }
  | { readonly kind: 'withdrawal-result'; readonly withdrawalId: string; readonly confirmed: boolean }
  | { readonly kind: 'release'; readonly subnetId: string };

export const TENANTS = ['t1', 't2', 't3'] as const;
export const PROVIDERS = ['p1', 'p2', 'p3', 'p4'] as const;
export const OWNER = 'o1';
export const SUBNETS = [
  { subnetId: 's1', asset: 'NTX', mode: 'fixed' as const },
  { subnetId: 's2', asset: 'GPU', mode: 'auction' as const },
];
export const CLASSES = ['H100', 'A100'] as const;
export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

const iso = (offsetSeconds: number): string => new Date(T0 + offsetSeconds * 1000).toISOString();

let counter = 0;
const envelope = <D extends MessageDefinition>(def: D, data: InputOf<D>, streamId: string): Input => {
  counter += 1;
  const id = counter.toString(16).padStart(12, '0');
  return {
    kind: 'message',
    envelope: buildEnvelope(def, data, {
      streamId,
      eventId: `01900000-0000-7000-8000-${id}`,
      occurredAt: iso(counter),
    }),
  };
};

const amount = (max: bigint) => fc.bigInt({ min: 0n, max }).map((v) => v.toString());

const parametersArb = (mode: 'fixed' | 'auction'): fc.Arbitrary<SubnetParameters> =>
  fc
    .record({
      h100: fc.bigInt({ min: 1n, max: 5_000_000n }),
      a100: fc.bigInt({ min: 1n, max: 3_000_000n }),
      billingIncrementSeconds: fc.integer({ min: 1, max: 120 }),
      minimumChargeSeconds: fc.integer({ min: 0, max: 300 }),
      subnetFeeBps: fc.integer({ min: 0, max: 2_000 }),
      providerMinStake: fc.bigInt({ min: 0n, max: 1_000n }),
      crash: fc.integer({ min: 0, max: 10_000 }),
      lost: fc.integer({ min: 0, max: 10_000 }),
      unbondingSeconds: fc.integer({ min: 0, max: 60 }),
      allowlist: fc.boolean(),
    })
    .map((r) => {
      const table = { H100: r.h100.toString(), A100: r.a100.toString() };
      return {
        gpuClasses: [...CLASSES],
        pricing:
          mode === 'fixed'
            ? { mode: 'fixed' as const, pricePerGpuHour: table }
            : { mode: 'auction' as const, reservePricePerGpuHour: table },
        billingIncrementSeconds: r.billingIncrementSeconds,
        minimumChargeSeconds: r.minimumChargeSeconds,
        subnetFeeBps: r.subnetFeeBps,
        providerMinStake: r.providerMinStake.toString(),
        slashing: { 'rank-crashed': r.crash, 'host-lost': r.lost },
        unbondingSeconds: r.unbondingSeconds,
        membership: r.allowlist
          ? { mode: 'allowlist' as const, providers: ['p1', 'p2', 'p3'] }
          : { mode: 'open' as const },
        trust: DEFAULT_SUBNET_TRUST,
        slashingPolicy: DEFAULT_SLASHING_POLICY,
        governance: { mode: 'owner' },
      };
    });

const jobArb = fc.record({
  tenant: fc.constantFrom(...TENANTS),
  subnet: fc.constantFrom(0, 1),
  gpus: fc.integer({ min: 1, max: 8 }),
  classes: fc.subarray([...CLASSES]),
  maxPrice: fc.bigInt({ min: 0n, max: 8_000_000n }),
  maxDuration: fc.integer({ min: 1, max: 7_200 }),
  providers: fc.integer({ min: 1, max: 3 }),
  /** Readings as fractions (per mille) of the max billable GPU-seconds; > 1000 runs over. */
  readings: fc.array(fc.integer({ min: 0, max: 1_300 }), { minLength: 0, maxLength: 6 }),
  agreedPremium: fc.bigInt({ min: 0n, max: 2_000_000n }),
  // Failures three times as often as the other ends: only they carry faults, and so slashes.
  end: fc.constantFrom('completed', 'failed', 'failed', 'failed', 'cancelled', 'none'),
  faultAt: fc.integer({ min: 0, max: 1_000 }),
  faultKind: fc.constantFrom('rank-crashed', 'host-lost', 'invalid-result'),
  faultVerified: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
  /** A replacement provider after recovery: more GPUs than the gang reported, so the escrow may run out. */
  replacement: fc.boolean(),
});

export const worldArb = fc.record({
  deposits: fc.array(
    fc.record({
      owner: fc.constantFrom(...TENANTS, ...PROVIDERS),
      asset: fc.constantFrom('NTX', 'GPU'),
      // Some tenants can afford their jobs, some cannot.
      amount: fc.oneof(amount(200_000_000n), amount(2_000_000_000_000n)),
    }),
    { maxLength: 12 },
  ),
  tenantsFunded: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
  subnetStakes: fc.tuple(amount(3_000_000_000n), amount(3_000_000_000n)),
  parameters: fc.tuple(parametersArb('fixed'), parametersArb('auction')),
  update: fc.option(parametersArb('fixed'), { nil: undefined }),
  joins: fc.array(
    fc.record({
      // p1 is the provider that faults: let it be a member often, so that slashing happens.
      provider: fc.constantFrom('p1', 'p1', 'p1', ...PROVIDERS),
      subnet: fc.constantFrom(0, 1),
      stake: fc.oneof(amount(1_000n), amount(5_000n)),
      leave: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  /**
   * Whether every provider first joins both subnets (three worlds in four): only members are billed,
   * so most jobs should have members to bill; in the others only the random joins make members.
   */
  allJoin: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
  /** Stake delegated to providers (members or not): it shares their pay and their slashes. */
  delegations: fc.array(
    fc.record({
      delegator: fc.constantFrom(...TENANTS, 'p2', 'p3'),
      // p1 is paid (and slashed) most often.
      provider: fc.constantFrom('p1', 'p1', ...PROVIDERS),
      subnet: fc.constantFrom(0, 1),
      amount: fc.oneof(amount(1_000n), amount(100_000n)),
      undelegate: fc.boolean(),
    }),
    { maxLength: 5 },
  ),
  jobs: fc.array(jobArb, { maxLength: 5 }),
  withdrawals: fc.array(
    fc.record({
      owner: fc.constantFrom(...TENANTS, ...PROVIDERS),
      source: fc.constantFrom('wallet', 'payable'),
      asset: fc.constantFrom('NTX', 'GPU'),
      amount: amount(50_000_000_000n),
      confirmed: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
  /**
   * A delegation by the owner to p1, the provider that faults, in each subnet, far above any
   * provider's own stake: p1's slashes then take more from delegated stake than from its own.
   */
  heavyDelegation: fc.option(
    fc.bigInt({ min: 10_000n, max: 1_000_000n }).map((v) => v.toString()),
    { nil: undefined },
  ),
});

export type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never;

/** Inputs in the order producers would emit them; `setup` ones (deposits, subnets, joins, delegations) first. */
export interface Phases {
  /** Deposits, then subnets, then joins, then delegations: the order people would do them in. */
  readonly setup: readonly (readonly Input[])[];
  readonly jobs: readonly Input[];
  readonly late: readonly Input[];
}

export const inputsOf = (world: World, name = 'w'): Phases => {
  counter = 0;
  const deposits: Input[] = [];
  const subnets: Input[] = [];
  const joins: Input[] = [];
  const delegations: Input[] = [];
  // The owner can always create its subnets; providers can usually stake.
  const baseline = [
    { owner: OWNER, asset: 'NTX', amount: '10000000000' },
    { owner: OWNER, asset: 'GPU', amount: '10000000000' },
    ...PROVIDERS.flatMap((p) => [
      { owner: p, asset: 'NTX', amount: '4000' },
      { owner: p, asset: 'GPU', amount: '4000' },
    ]),
    ...(world.tenantsFunded
      ? TENANTS.flatMap((t) => [
          { owner: t, asset: 'NTX', amount: '3000000000' },
          { owner: t, asset: 'GPU', amount: '3000000000' },
        ])
      : []),
  ];
  [...baseline, ...world.deposits].forEach((d, i) =>
    deposits.push({
      kind: 'deposit',
      deposit: {
        depositId: `${name}-d${i}`,
        asset: d.asset,
        ownerId: d.owner,
        amount: d.amount,
        chain: 'simulated',
        chainTxId: `tx${i}`,
        confirmations: 15,
        confirmedAt: iso(i),
      },
    }),
  );
  SUBNETS.forEach((s, i) =>
    subnets.push(
      envelope(
        SubnetCreateRequested,
        {
          subnetId: s.subnetId,
          ownerId: OWNER,
          asset: s.asset,
          stake: world.subnetStakes[i]!,
          parameters: world.parameters[i]!,
          requestedAt: iso(0),
        },
        `subnet-${s.subnetId}`,
      ),
    ),
  );
  if (world.update)
    subnets.push(
      envelope(
        SubnetParametersUpdateRequested,
        { subnetId: 's1', ownerId: OWNER, parameters: world.update, requestedAt: iso(1) },
        'subnet-s1',
      ),
    );
  const everyone = world.allJoin
    ? PROVIDERS.flatMap((provider) => [0, 1].map((subnet) => ({ provider, subnet, stake: '1000' })))
    : [];
  for (const j of [...everyone, ...world.joins]) {
    const subnetId = SUBNETS[j.subnet]!.subnetId;
    joins.push(
      envelope(
        SubnetJoinRequested,
        { subnetId, providerId: j.provider, stake: j.stake, requestedAt: iso(2) },
        `subnet-${subnetId}`,
      ),
    );
  }
  const heavy = [0, 1].flatMap((subnet) =>
    world.heavyDelegation === undefined
      ? []
      : [{ delegator: OWNER, provider: 'p1', subnet, amount: world.heavyDelegation, undelegate: false }],
  );
  for (const d of [...world.delegations, ...heavy]) {
    const subnetId = SUBNETS[d.subnet]!.subnetId;
    delegations.push(
      envelope(
        SubnetDelegationRequested,
        {
          subnetId,
          delegatorId: d.delegator,
          providerId: d.provider,
          amount: d.amount,
          requestedAt: iso(3),
        },
        `subnet-${subnetId}`,
      ),
    );
  }

  const jobs: Input[] = [];
  world.jobs.forEach((j, index) => {
    const jobId = `${name}-j${index}`;
    const subnet = SUBNETS[j.subnet]!;
    jobs.push(
      envelope(
        JobSubmitted,
        {
          jobId,
          tenantId: j.tenant,
          subnetId: subnet.subnetId,
          asset: subnet.asset,
          gpus: j.gpus,
          gpuClasses: j.classes,
          maxPricePerGpuHour: j.maxPrice.toString(),
          maxDurationSeconds: j.maxDuration,
          submittedAt: iso(10),
        },
        `job-${jobId}`,
      ),
    );
    // Split the gang's GPUs over up to `providers` providers.
    const count = Math.min(j.providers, j.gpus);
    const gpusOf = PROVIDERS.slice(0, count).map((p, i) => ({
      providerId: p,
      gpus: Math.floor(j.gpus / count) + (i < j.gpus % count ? 1 : 0),
      gpuClass: j.classes[0] ?? CLASSES[i % CLASSES.length]!,
    }));
    if (j.replacement) gpusOf.push({ providerId: 'p4', gpus: j.gpus, gpuClass: j.classes[0] ?? CLASSES[0] });
    const maxSeconds = j.maxDuration;
    const sorted = [...j.readings].sort((a, b) => a - b);
    const readingAt = (perMille: number, gpus: number) => Math.floor((perMille * maxSeconds * gpus) / 1000);
    const usageAt = (perMille: number) =>
      gpusOf.map((p) => ({
        ...p,
        gpuSeconds: readingAt(perMille, p.gpus),
        ...(subnet.mode === 'auction'
          ? { agreedPricePerGpuHour: (j.maxPrice / 2n + j.agreedPremium).toString() }
          : {}),
      }));
    sorted.forEach((perMille, i) =>
      jobs.push(
        envelope(
          UsageReported,
          { jobId, seq: i + 1, providers: usageAt(perMille), reportedAt: iso(20 + i) },
          `exec-${jobId}`,
        ),
      ),
    );
    const final = usageAt(sorted.at(-1) ?? 0);
    const faulty = gpusOf[0]!;
    const faults = [
      {
        providerId: faulty.providerId,
        kind: j.faultKind as 'rank-crashed',
        billableGpuSeconds: readingAt(Math.min(j.faultAt, sorted.at(-1) ?? 0), faulty.gpus),
        verified: j.faultVerified,
      },
    ];
    if (j.end === 'completed')
      jobs.push(
        envelope(JobCompleted, { jobId, usage: final, faults: [], completedAt: iso(40) }, `exec-${jobId}`),
      );
    if (j.end === 'failed')
      jobs.push(
        envelope(
          JobFailed,
          {
            jobId,
            reason: { code: 'RANK_EXITED', message: 'rank 0 exited 1' },
            usage: final,
            faults,
            failedAt: iso(40),
          },
          `exec-${jobId}`,
        ),
      );
    if (j.end === 'cancelled')
      jobs.push(envelope(JobCancelled, { jobId, usage: final, cancelledAt: iso(40) }, `exec-${jobId}`));
  });

  const late: Input[] = [];
  world.withdrawals.forEach((w, i) => {
    const withdrawalId = `${name}-w${i}`;
    late.push(
      envelope(
        WithdrawalRequested,
        {
          withdrawalId,
          ownerId: w.owner,
          source: w.source,
          asset: w.asset,
          amount: w.amount,
          destination: 'addr_test1qz',
          requestedAt: iso(50),
        },
        `withdrawal-${withdrawalId}`,
      ),
    );
    late.push({ kind: 'withdrawal-result', withdrawalId, confirmed: w.confirmed });
  });
  world.joins
    .filter((j) => j.leave)
    .forEach((j) => {
      const subnetId = SUBNETS[j.subnet]!.subnetId;
      late.push(
        envelope(
          SubnetLeaveRequested,
          { subnetId, providerId: j.provider, requestedAt: iso(60) },
          `subnet-${subnetId}`,
        ),
      );
    });
  world.delegations
    .filter((d) => d.undelegate)
    .forEach((d) => {
      const subnetId = SUBNETS[d.subnet]!.subnetId;
      late.push(
        envelope(
          SubnetUndelegationRequested,
          { subnetId, delegatorId: d.delegator, providerId: d.provider, requestedAt: iso(60) },
          `subnet-${subnetId}`,
        ),
      );
    });
  for (const s of SUBNETS) late.push({ kind: 'release', subnetId: s.subnetId });
  return { setup: [deposits, subnets, joins, delegations], jobs, late };
};
