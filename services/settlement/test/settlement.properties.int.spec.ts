import type { JobFailed, PayloadOf, SubnetProviderSlashed } from '@gpunet/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliver as deliverTo,
  type LedgerView,
  type SettlementView,
  shuffledWithDuplicates,
  SteppingClock,
} from './support/deliveries';
import {
  checkJobs,
  checkLedger,
  checkMembership,
  checkRewardShares,
  checkSlashes,
  hashOf,
  replayLedger,
  viewHash,
} from './support/invariants';
import { type Input, inputsOf, T0, TENANTS, worldArb } from './support/scenario';
import { type SettlementUnderTest, startSettlement } from './support/service';

/*
 * The ledger's invariants over random worlds (deposits, subnets, joins, delegations, jobs with usage
 * and an end, withdrawals, unbonding), delivered the way JetStream may deliver them: shuffled, some
 * messages twice or three times, prerequisites retried — to settlement's controllers and command handlers on
 * real Postgres (each world in a transaction of its own, rolled back after it). Seeded: a failure
 * prints its seed and path; bounded, so that the suite stays fast.
 */

const clock = new SteppingClock(T0);
let s: SettlementUnderTest;
beforeAll(async () => {
  s = await startSettlement('settlement_properties', { clock });
}, 60_000);
afterAll(() => s?.close());

const deliver = (inputs: readonly Input[], options: { afterEach?: (ledger: LedgerView) => void } = {}) =>
  deliverTo(s, clock, inputs, options);

const failuresOf = (inputs: readonly Input[]): Map<string, PayloadOf<typeof JobFailed>> =>
  new Map(
    inputs.flatMap((i) =>
      i.kind === 'message' && i.envelope.type === 'job.failed'
        ? [
            [
              (i.envelope.data as PayloadOf<typeof JobFailed>).jobId,
              i.envelope.data as PayloadOf<typeof JobFailed>,
            ],
          ]
        : [],
    ),
  );

const RUNS = { seed: 20_301, numRuns: 40 };

/** How often each event happened across all runs: proof that the worlds exercise every path. */
const tally = new Map<string, number>();
const count = (view: SettlementView): void => {
  for (const { event } of view.log) {
    const reason = (event.data as { reason?: unknown }).reason;
    const key = typeof reason === 'string' ? `${event.type}:${reason}` : event.type;
    tally.set(event.type, (tally.get(event.type) ?? 0) + 1);
    if (key !== event.type) tally.set(key, (tally.get(key) ?? 0) + 1);
    // A slash whose delegated part outweighs the provider's own stake (a legal slash all the same).
    if (event.type === 'subnet.provider-slashed') {
      const { shares, stakeBefore } = event.data as PayloadOf<typeof SubnetProviderSlashed>;
      const delegated = (shares ?? [])
        .filter((x) => x.role === 'delegator')
        .reduce((sum, x) => sum + BigInt(x.amount), 0n);
      if (delegated > BigInt(stakeBefore))
        tally.set(
          `${event.type}:delegated-over-own`,
          (tally.get(`${event.type}:delegated-over-own`) ?? 0) + 1,
        );
    }
    for (const field of ['notMembers', 'delegatorShares']) {
      const list = (event.data as Record<string, unknown>)[field];
      if (Array.isArray(list) && list.length > 0)
        tally.set(`${event.type}:${field}`, (tally.get(`${event.type}:${field}`) ?? 0) + 1);
    }
  }
  for (const t of view.transfers) {
    tally.set(`transfer:${t.kind}`, (tally.get(`transfer:${t.kind}`) ?? 0) + 1);
    tally.set(`transfer:${t.code}`, (tally.get(`transfer:${t.code}`) ?? 0) + 1);
  }
};

describe('settlement under shuffled, duplicated delivery (property)', () => {
  it('holds every invariant after every delivery, and a replay of its log rebuilds an identical ledger', async () => {
    tally.clear();
    await fc.assert(
      fc.asyncProperty(worldArb, fc.nat(), fc.integer({ min: 0, max: 3 }), async (world, seed, mode) => {
        const { setup, jobs, late } = inputsOf(world);
        const inputs = [...setup.flat(), ...jobs, ...late];
        // One run in four shuffles everything (a job may then precede its subnet, a stake its
        // deposit); the others shuffle within phases, so that most jobs find their subnet funded.
        const order =
          mode === 0
            ? shuffledWithDuplicates(inputs, seed)
            : [...setup, jobs, late].flatMap((phase, i) => shuffledWithDuplicates(phase, seed + i));
        const { view } = await deliver(order, { afterEach: checkLedger });
        checkJobs(view, failuresOf(inputs));
        checkSlashes(view);
        checkMembership(view);
        checkRewardShares(view);
        expect(hashOf(replayLedger(view.log))).toBe(viewHash(view));
        const again = await deliver(order);
        expect(viewHash(again.view)).toBe(viewHash(view));
        count(view);
      }),
      RUNS,
    );
    console.log(Object.fromEntries([...tally.entries()].sort()));
    for (const type of [
      'job.funded',
      'escrow.rejected',
      'usage.metered',
      'escrow.low',
      'escrow.exhausted',
      'job.settled',
      'subnet.created',
      'subnet.parameters-updated',
      'subnet.provider-joined',
      'subnet.provider-left',
      'subnet.stake-released',
      'subnet.provider-slashed',
      'withdrawal.held',
      'withdrawal.completed',
      'withdrawal.failed',
      'transfer:post-pending',
      'transfer:void-pending',
      'usage.metered:notMembers',
      // Delegations reach settlement's state (and so the shares) once it consumes their requests.
      ...(s.consumes('subnet.delegation-requested')
        ? [
            'subnet.delegated',
            'job.settled:delegatorShares',
            'transfer:reward-share',
            'subnet.provider-slashed:delegated-over-own',
          ]
        : []),
    ])
      expect(tally.get(type) ?? 0, `${type} too rare to prove anything`).toBeGreaterThanOrEqual(3);
    if (!s.consumes('subnet.delegation-requested'))
      expect(tally.get('job.settled:delegatorShares') ?? 0, 'shares without delegations').toBe(0);
  }, 120_000);

  it('with funds and subnets in place, final balances do not depend on the order jobs are delivered in', async () => {
    const balances = (view: SettlementView): Map<string, string> => {
      const out = new Map<string, string>();
      let stakeAndTreasury = new Map<string, bigint>();
      for (const a of view.accounts) {
        // Slashes take a share of the stake left, so their split depends on order; their sum does not.
        if (a.purpose === 'stake' || a.purpose === 'treasury') {
          const net = a.creditsPosted - a.debitsPosted;
          stakeAndTreasury = stakeAndTreasury.set(a.asset, (stakeAndTreasury.get(a.asset) ?? 0n) + net);
          continue;
        }
        out.set(a.id, `${a.debitsPending}/${a.debitsPosted}/${a.creditsPending}/${a.creditsPosted}`);
      }
      for (const [asset, total] of stakeAndTreasury) out.set(`${asset}:stake+treasury`, total.toString());
      return out;
    };
    await fc.assert(
      fc.asyncProperty(worldArb, fc.nat(), fc.nat(), async (world, seedA, seedB) => {
        const rich = {
          ...world,
          // Without replacement providers the escrow always covers the usage; with them, who gets
          // the last of an exhausted escrow depends on which report arrives first.
          jobs: world.jobs.map((j) => ({ ...j, replacement: false })),
          // Reward shares follow the stakes at settlement, which other jobs' slashes change: like the
          // slashes' split, they depend on the order; the first property checks them.
          delegations: [],
          heavyDelegation: undefined,
          deposits: [
            ...TENANTS.flatMap((t) => [
              { owner: t, asset: 'NTX' as const, amount: '1000000000000000000' },
              { owner: t, asset: 'GPU' as const, amount: '1000000000000000000' },
            ]),
            ...world.deposits,
          ],
        };
        const { setup, jobs } = inputsOf(rich);
        const a = await deliver([...setup.flat(), ...shuffledWithDuplicates(jobs, seedA)]);
        const b = await deliver([...setup.flat(), ...shuffledWithDuplicates(jobs, seedB)]);
        expect(balances(b.view)).toEqual(balances(a.view));
        checkJobs(a.view, failuresOf(jobs));
      }),
      { ...RUNS, numRuns: 20 },
    );
  }, 120_000);
});
