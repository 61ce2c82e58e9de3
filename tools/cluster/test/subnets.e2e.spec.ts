import {
  type Envelope,
  type JobFunded,
  type JobPlaced,
  type JobSettled,
  type PayloadOf,
  type ProviderChallenged,
  SettlementBalancesQuery,
  type SlashShare,
  type SubnetSlashProposed,
  type UsageMetered,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { waitFor } from '@gpunet/testing';
import { createUser } from '@nats-io/nkeys';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  awaitParametersVersion,
  awaitProposalDecided,
  awaitSlashProposed,
  awaitSlashTaken,
  awaitStanding,
  awaitSubnet,
  awaitSubnetView,
  devSubnetParameters,
  expectedSlash,
  GatewayApi,
  ledgerTotals,
  proposeAndVote,
  reconciliationMismatches,
  type SimulatedEdge,
  type SubnetParameters,
  startLyingH100Edge,
  startSimulatedEdge,
} from '../src';
import {
  type ClusterUnderTest,
  DATABASE_URL,
  NATS_URL,
  rtxHost,
  startCluster,
} from './support/cluster-fixture';

/*
 * Subnets govern themselves (ADR 0071), end to end on real components: the control plane as
 * processes (settlement, discovery, benchmarking, scheduler, execution, gateway) on real NATS and
 * Postgres, simulated edges and one lying edge, every request through the REST gateway under the
 * caller's own API key (owner, providers under their edge ids, a delegator, a tenant).
 *
 * Three subnets price the same GPU class (RTX 4090) differently:
 * - X (stake-vote governance, 1.00 NTX per GPU-hour, min stake 1, claim-mismatch slashed 12.34 %,
 *   held 3 s for appeal, to the treasury): alpha (3 staked), low (exactly the minimum, 1) and the
 *   liar (2, two H100s it does not have), to which a delegator delegates.
 * - Y (owner-governed, 0.80): beta. Beta's own policy accepts X's jobs too, and it never joined X:
 *   only settlement's membership (the scheduler's standing filter) keeps X's jobs off it.
 * - Z (sealed-bid auction, reserve 0.15): zed-a (floor 0.20) and zed-b (floor 0.30).
 *
 * 1. A job in X runs on X's members at X's price, never on beta; a job in Y on beta at Y's.
 * 2. A proposal with too little stake voting is rejected, quorum not met; the owner's direct
 *    update is refused (the members govern X).
 * 3. A proposal raising X's price to 1.50 and its minimum stake to 1.5 passes by stake vote: low
 *    falls below the minimum and is not offered (a 4-GPU job waits, saying so), and the next job
 *    is charged 1.50.
 * 4. The liar fails its challenges: each is a held slash of 12.34 % of its own stake plus the
 *    delegation, split pro rata (floors, the remainder on the provider), taken after the window.
 * 5. A 4-GPU job in Z clears at the highest placed bid (0.30) and settles at it.
 * 6. The ledger still sums to zero per asset, and reconciliation never found it off.
 *
 * Jobs are one `sleep` per rank (framework `custom`): this suite is about who is offered and what is
 * charged, not about training. Settlement's chain pass runs every 500 ms: votes close, passed
 * changes apply and held slashes are taken within a pass of their time.
 */
const ASSET = 'NTX';
const RTX = 'RTX-4090';
const X = 'gov-x';
const Y = 'gov-y';
const Z = 'gov-z';
const OWNER = 'gov-owner';
const TENANT = 'gov-tenant';
const DELEGATOR = 'gov-delegator';

/** The least stake that creates a subnet in this cluster (SETTLEMENT_MIN_SUBNET_STAKE): 2 NTX. */
const OWNER_STAKE = 2_000_000n;
const X_PRICE = 1_000_000n;
const X_NEW_PRICE = 1_500_000n;
const Y_PRICE = 800_000n;
const Z_RESERVE = 150_000n;
const X_MIN_STAKE = 1_000_000n;
const X_NEW_MIN_STAKE = 1_500_000n;
const ALPHA_STAKE = 3_000_000n;
const LOW_STAKE = X_MIN_STAKE;
const LIAR_STAKE = 2_000_000n;
/** Odd on purpose: the pro rata split leaves a remainder for the provider's share. */
const DELEGATED = 1_000_003n;
const CLAIM_MISMATCH_BPS = 1_234;
const APPEAL_SECONDS = 3;
const JAIL_SECONDS = 600;
const VOTING_SECONDS = 6;

const governedX = (price: bigint, minStake: bigint): SubnetParameters => ({
  ...devSubnetParameters(RTX, price),
  providerMinStake: minStake.toString(),
  slashing: { 'claim-mismatch': CLAIM_MISMATCH_BPS },
  // Its edges run the process runtime: host processes, which a subnet of the test asset may accept.
  trust: {
    simulatedGpus: 'allowed',
    verifiedGpus: 'required',
    spotChecksPerGpuHour: 0,
    minimumIsolation: 'host-process',
  },
  slashingPolicy: { appealSeconds: APPEAL_SECONDS, destination: 'treasury', jailSeconds: JAIL_SECONDS },
  governance: {
    mode: 'stake-vote',
    quorumBps: 5_000,
    thresholdBps: 6_000,
    votingSeconds: VOTING_SECONDS,
    delaySeconds: 0,
  },
});
const ownedY: SubnetParameters = {
  ...devSubnetParameters(RTX, Y_PRICE),
  subnetFeeBps: 300,
  providerMinStake: '1000000',
};
const auctionZ: SubnetParameters = {
  ...devSubnetParameters(RTX, Z_RESERVE),
  pricing: { mode: 'auction', reservePricePerGpuHour: { [RTX]: Z_RESERVE.toString() } },
  providerMinStake: '1000000',
};

/** `gpus` RTX 4090s in `subnet`: one `sleep` per GPU, at most two per node. */
const sleepJob = (name: string, subnet: string, gpus: number, maxPrice: string): string =>
  `apiVersion: gpunet.io/v1
kind: Ensemble
metadata: { name: ${name} }
max_duration: 2m
subnet: ${subnet}
budget: { asset: ${ASSET}, decimals: 6, max_price_per_gpu_hour: '${maxPrice}' }
allocations:
  work:
    executor: process
    execution:
      cmd: [/bin/sh, -c, 'sleep 3']
    resources:
      cpu: { cores: 1 }
      ram: { size: 1GiB }
      gpus: { count: ${gpus}, models: ['RTX 4090'] }
    distributed:
      framework: custom
      gpus_per_rank: 1
      ranks_per_node: { max: 2 }
      max_nodes: 2
`;

/** Slash shares in a stable order (settlement's order is its own). */
const byStaker = (shares: readonly SlashShare[]): SlashShare[] =>
  [...shares].sort((a, b) => (a.stakerId < b.stakerId ? -1 : a.stakerId > b.stakerId ? 1 : 0));

/** An edge identity made ahead of the edge, so that it joins its subnets before it first comes online. */
const identity = (): { seed: string; id: string } => {
  const kp = createUser();
  return { seed: new TextDecoder().decode(kp.getSeed()), id: kp.getPublicKey() };
};

describe('subnets govern themselves: membership, stake votes, held slashes, sealed-bid auctions', () => {
  let c: ClusterUnderTest;
  let gatewayUrl: string;
  const adminKey = `gpn_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  const ids = {
    alpha: identity(),
    beta: identity(),
    low: identity(),
    liar: identity(),
    zedA: identity(),
    zedB: identity(),
  };
  type Name = keyof typeof ids;
  const edges = new Map<Name, SimulatedEdge>();
  type Caller = Name | 'owner' | 'tenant' | 'delegator';
  const api = {} as Record<Caller, GatewayApi>;

  beforeAll(async () => {
    c = await startCluster(
      'subnets',
      ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution', 'gateway'],
      {
        gateway: { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_KEY: adminKey },
        execution: { EXECUTION_USAGE_PERIOD: '2s', EXECUTION_START_BARRIER: '2m', EXECUTION_TICK: '500ms' },
        // The liar's GPUs are challenged a second after they register and fail a second after the
        // deadline; no idle re-challenges, so each GPU is challenged exactly once.
        benchmarking: {
          BENCHMARKING_CHALLENGE_INTERVAL: '1s',
          BENCHMARKING_CHALLENGE_LATE_GRACE: '1s',
          BENCHMARKING_CHALLENGE_IDLE_INTERVAL: '0s',
        },
        settlement: { SETTLEMENT_CHAIN_PASS_MS: '500', SETTLEMENT_MIN_SUBNET_STAKE: OWNER_STAKE.toString() },
      },
    );
    const url = /"url":"([^"]+)"/.exec(c.cluster.service('gateway').output)?.[1];
    if (!url) throw new Error('the gateway did not say where it listens');
    gatewayUrl = url;
    const callers: [Caller, string][] = [
      ...(Object.keys(ids) as Name[]).map((name): [Caller, string] => [name, ids[name].id]),
      ['owner', OWNER],
      ['tenant', TENANT],
      ['delegator', DELEGATOR],
    ];
    for (const [name, tenantId] of callers)
      api[name] = await GatewayApi.create(gatewayUrl, adminKey, tenantId);

    // Money first: the tenant's budget, the owner's three stakes, each member's and the delegator's.
    await api.tenant.deposit(ASSET, 1_000_000_000n);
    await api.owner.deposit(ASSET, OWNER_STAKE * 3n);
    await api.delegator.deposit(ASSET, DELEGATED);
    for (const name of Object.keys(ids) as Name[]) await api[name].deposit(ASSET, 5_000_000n);

    await api.owner.createSubnet({
      subnetId: X,
      asset: ASSET,
      stake: OWNER_STAKE,
      parameters: governedX(X_PRICE, X_MIN_STAKE),
    });
    await api.owner.createSubnet({ subnetId: Y, asset: ASSET, stake: OWNER_STAKE, parameters: ownedY });
    await api.owner.createSubnet({ subnetId: Z, asset: ASSET, stake: OWNER_STAKE, parameters: auctionZ });
    for (const s of [X, Y, Z]) await awaitSubnet(api.owner, s);
    await api.alpha.join(X, ALPHA_STAKE);
    await api.low.join(X, LOW_STAKE);
    await api.liar.join(X, LIAR_STAKE);
    await api.beta.join(Y, 1_000_000n);
    await api.zedA.join(Z, 1_000_000n);
    await api.zedB.join(Z, 1_000_000n);
    await awaitSubnet(api.owner, X, [ids.alpha.id, ids.low.id, ids.liar.id]);
    await awaitSubnet(api.owner, Y, [ids.beta.id]);
    await awaitSubnet(api.owner, Z, [ids.zedA.id, ids.zedB.id]);

    // The honest edges; the liar starts in step 4, once its delegator has delegated to it.
    const edge = (name: Name, subnets: string[], floor = '0.10') =>
      startSimulatedEdge({
        name: `gov-${name.toLowerCase()}`,
        inventory: rtxHost(`gov-${name}`),
        subnets,
        floorPerGpuHour: floor,
        seed: ids[name].seed,
        natsUrl: NATS_URL,
        prefix: c.nats.prefix,
      }).then((e) => edges.set(name, e));
    await Promise.all([
      edge('alpha', [X]),
      edge('beta', [Y, X]),
      edge('low', [X]),
      edge('zedA', [Z], '0.20'),
      edge('zedB', [Z], '0.30'),
    ]);
    await waitFor(
      () =>
        [...edges.values()].every((e) =>
          c.events.items.some(
            (x) => x.type === 'provider.online' && (x.data as { providerId: string }).providerId === e.edgeId,
          ),
        ),
      { timeoutMs: 60_000, description: 'every honest edge online' },
    );
  }, 240_000);

  afterAll(async () => {
    for (const e of edges.values()) await e.remove().catch(() => undefined);
    await c?.close();
  }, 120_000);

  const nameOf = (providerId: string): string =>
    (Object.entries(ids).find(([, v]) => v.id === providerId)?.[0] ?? providerId).toString();
  const explain = (about: string): string =>
    [
      ...c.events.items
        .filter(
          (e) =>
            (JSON.stringify(e.data).includes(about) || e.type.startsWith('subnet.')) &&
            !e.type.startsWith('edge.rank-'),
        )
        .map((e) => {
          const { spec: _spec, ...data } = e.data as { spec?: unknown };
          return `${e.occurredAt} ${e.type} ${JSON.stringify(data).slice(0, 600)}`;
        }),
      ...c.cluster.options.services.map((s) => `--- ${s}\n${c.cluster.service(s).output.slice(-2000)}`),
      ...[...edges.values()].map((e) => `--- ${e.name}\n${e.process.output.slice(-1500)}`),
    ].join('\n');
  const withContext = <T>(p: Promise<T>, about: string, what: string): Promise<T> =>
    p.catch((error: unknown) => {
      throw new Error(`${what}:\n${explain(about)}`, { cause: error });
    });

  const ofJob = (type: string, jobId: string): Envelope[] =>
    c.events.items.filter((e) => e.type === type && (e.data as { jobId?: string }).jobId === jobId);
  const jobEvent = <D>(type: string, jobId: string, timeoutMs = 120_000): Promise<PayloadOf<D>> =>
    withContext(
      c.events
        .waitFor((e) => e.type === type && (e.data as { jobId?: string }).jobId === jobId, { timeoutMs })
        .then((e) => e.data as PayloadOf<D>),
      jobId,
      `no ${type} for job ${jobId}`,
    );
  const placedOn = (jobId: string): string[] =>
    ofJob('job.placed', jobId).flatMap((e) =>
      (e.data as PayloadOf<typeof JobPlaced>).allocations.flatMap((a) => a.nodes.map((n) => n.providerId)),
    );

  /**
   * The job completed and settled, every provider paid ⌊its billed GPU-seconds × `price` / 3600⌋,
   * metered at `price`; settlement's statement says the same. Returns the settlement.
   */
  const expectSettledAt = async (jobId: string, price: bigint): Promise<PayloadOf<typeof JobSettled>> => {
    const end = await withContext(
      c.events.waitFor(
        (e) =>
          (e.type === 'job.completed' || e.type === 'job.failed' || e.type === 'job.unschedulable') &&
          (e.data as { jobId: string }).jobId === jobId,
        { timeoutMs: 120_000 },
      ),
      jobId,
      `job ${jobId} did not end`,
    );
    expect(end.type, explain(jobId)).toBe('job.completed');
    const settled = await jobEvent<typeof JobSettled>('job.settled', jobId);
    expect(settled.outcome).toBe('completed');
    expect(settled.providers.length).toBeGreaterThan(0);
    let paid = 0n;
    for (const p of settled.providers) {
      expect(p.gpuSecondsBilled, nameOf(p.providerId)).toBeGreaterThan(0);
      expect(BigInt(p.paid), nameOf(p.providerId)).toBe((BigInt(p.gpuSecondsBilled) * price) / 3_600n);
      paid += BigInt(p.paid);
    }
    expect(BigInt(settled.paidToProviders)).toBe(paid);
    const metered = ofJob('usage.metered', jobId).flatMap(
      (e) => (e.data as PayloadOf<typeof UsageMetered>).providers,
    );
    expect(metered.length).toBeGreaterThan(0);
    for (const m of metered) expect(m.pricePerGpuHour, nameOf(m.providerId)).toBe(price.toString());
    const statement = await api.tenant.jobStatement(jobId);
    expect(statement).toMatchObject({ status: 'settled', paidToProviders: paid.toString(), pending: '0' });
    return settled;
  };

  /** Where the job waits: the scheduler's explanation once its last attempt failed. */
  const waitingExplanation = (jobId: string) =>
    withContext(
      waitFor(
        async () => {
          const x = await api.tenant.explanation(jobId);
          return x !== null && x.outcome.kind === 'failure' ? x : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200, description: `job ${jobId} waiting` },
      ),
      jobId,
      `job ${jobId} did not wait`,
    );
  const cancel = async (jobId: string): Promise<void> => {
    await api.tenant.cancelJob(jobId);
    await jobEvent('job.settled', jobId, 60_000);
  };

  it('1. a job in X runs only on X members at X price, never on Y provider; Y job at Y price', async () => {
    const inX = await api.tenant.submitJob(sleepJob('gov-x-first', X, 2, '2.00'));
    const inY = await api.tenant.submitJob(sleepJob('gov-y-first', Y, 2, '2.00'));

    const fundedX = await jobEvent<typeof JobFunded>('job.funded', inX);
    expect(fundedX).toMatchObject({ subnetId: X, subnetVersion: 1, gpuClasses: [RTX] });
    expect(fundedX.terms.pricing).toEqual({ mode: 'fixed', pricePerGpuHour: { [RTX]: X_PRICE.toString() } });
    const fundedY = await jobEvent<typeof JobFunded>('job.funded', inY);
    expect(fundedY.terms.pricing).toEqual({ mode: 'fixed', pricePerGpuHour: { [RTX]: Y_PRICE.toString() } });

    await Promise.all([expectSettledAt(inX, X_PRICE), expectSettledAt(inY, Y_PRICE)]);
    const onX = placedOn(inX);
    expect(onX.length, explain(inX)).toBeGreaterThan(0);
    // Beta's policy takes X's jobs; settlement's word (it never joined X) keeps them off it.
    expect(onX).not.toContain(ids.beta.id);
    for (const p of onX) expect([ids.alpha.id, ids.low.id]).toContain(p);
    expect(new Set(placedOn(inY))).toEqual(new Set([ids.beta.id]));
    const settledX = ofJob('job.settled', inX)[0]!.data as PayloadOf<typeof JobSettled>;
    expect(settledX.providers.map((p) => p.providerId)).not.toContain(ids.beta.id);
  }, 240_000);

  it('2. a proposal with too little stake voting is rejected: quorum not met', async () => {
    // Alpha's 3 of the 8 that may vote (owner 2, alpha 3, low 1, liar 2): under the 50 % quorum.
    const proposalId = 'gov-x-cheaper';
    const { opened, cast } = await withContext(
      proposeAndVote(
        c.events,
        X,
        api.alpha,
        {
          proposalId,
          title: 'Cheaper RTX 4090s',
          change: { kind: 'parameters', parameters: governedX(800_000n, X_MIN_STAKE) },
        },
        [{ voter: api.alpha, choice: 'yes' }],
      ),
      proposalId,
      'the proposal did not open or its vote was not counted',
    );
    const electorate = (OWNER_STAKE + ALPHA_STAKE + LOW_STAKE + LIAR_STAKE).toString();
    expect(opened).toMatchObject({ proposerId: ids.alpha.id, decidedBy: 'stake-vote', electorate });
    expect(Date.parse(opened.votingEndsAt) - Date.parse(opened.openedAt)).toBe(VOTING_SECONDS * 1_000);
    expect(cast.map((v) => v.weight)).toEqual([ALPHA_STAKE.toString()]);

    const decided = await withContext(
      awaitProposalDecided(c.events, X, proposalId),
      proposalId,
      'the proposal was not decided',
    );
    expect(decided).toMatchObject({
      outcome: 'rejected',
      reason: 'quorum-not-met',
      yes: ALPHA_STAKE.toString(),
      no: '0',
      abstain: '0',
      electorate,
      takesEffectAt: null,
    });
    expect(Date.parse(decided.decidedAt)).toBeGreaterThanOrEqual(Date.parse(opened.votingEndsAt));
    const view = await awaitSubnetView(
      api.owner,
      X,
      (v) => v.proposals?.some((p) => p.proposalId === proposalId && p.status === 'rejected') ?? false,
      'the rejected proposal shown',
    );
    expect(view.proposals?.find((p) => p.proposalId === proposalId)).toMatchObject({
      kind: 'parameters',
      status: 'rejected',
      reason: 'quorum-not-met',
      yes: ALPHA_STAKE.toString(),
      appliedVersion: null,
    });
    expect(view.version).toBe(1);

    // In a stake-vote subnet the owner cannot change the rules alone.
    await api.owner.updateParameters(X, governedX(500_000n, X_MIN_STAKE));
    const refused = await withContext(
      c.events.waitFor(
        (e) => e.type === 'subnet.request-rejected' && (e.data as { subnetId: string }).subnetId === X,
        {
          timeoutMs: 30_000,
        },
      ),
      X,
      "the owner's direct update was not refused",
    );
    expect(refused.data).toMatchObject({
      request: 'update-parameters',
      requesterId: OWNER,
      reason: 'governance-mode',
    });
  }, 120_000);

  it('3. a passed stake vote raises price and minimum: low is not offered, the next job pays the new price', async () => {
    const proposalId = 'gov-x-dearer';
    const { opened, cast } = await withContext(
      proposeAndVote(
        c.events,
        X,
        api.owner,
        {
          proposalId,
          title: 'RTX 4090 at 1.50, minimum stake 1.5',
          change: { kind: 'parameters', parameters: governedX(X_NEW_PRICE, X_NEW_MIN_STAKE) },
        },
        [
          { voter: api.owner, choice: 'yes' },
          { voter: api.alpha, choice: 'yes' },
          { voter: api.low, choice: 'no' },
        ],
      ),
      proposalId,
      'the proposal did not open or its votes were not counted',
    );
    expect(cast.map((v) => v.weight)).toEqual([OWNER_STAKE, ALPHA_STAKE, LOW_STAKE].map(String));
    // 6 of 8 voted (quorum 50 %); yes 5 of 6 (threshold 60 %).
    const decided = await withContext(
      awaitProposalDecided(c.events, X, proposalId),
      proposalId,
      'the proposal was not decided',
    );
    expect(decided).toMatchObject({
      outcome: 'passed',
      reason: 'threshold-met',
      yes: (OWNER_STAKE + ALPHA_STAKE).toString(),
      no: LOW_STAKE.toString(),
      abstain: '0',
    });
    // No delay: the change takes effect as the vote closes (at most the pass that decided it).
    expect(Date.parse(decided.takesEffectAt!)).toBeGreaterThanOrEqual(Date.parse(opened.votingEndsAt));
    expect(Date.parse(decided.takesEffectAt!)).toBeLessThanOrEqual(Date.parse(decided.decidedAt));
    const updated = await awaitParametersVersion(c.events, X, 2);
    expect(updated.proposalId).toBe(proposalId);
    expect(updated.parameters.pricing).toEqual({
      mode: 'fixed',
      pricePerGpuHour: { [RTX]: X_NEW_PRICE.toString() },
    });
    expect(updated.parameters.providerMinStake).toBe(X_NEW_MIN_STAKE.toString());

    // The new minimum is a change of standing: low (1 < 1.5) is no longer offered; alpha is.
    const standing = await awaitStanding(c.events, X, ids.low.id, 'below-minimum-stake');
    expect(standing).toMatchObject({ stake: LOW_STAKE.toString(), minStake: X_NEW_MIN_STAKE.toString() });
    const view = await awaitSubnetView(
      api.owner,
      X,
      (v) =>
        v.version === 2 &&
        v.providers.find((p) => p.providerId === ids.low.id)?.standing === 'below-minimum-stake',
      'version 2 and low below the minimum',
    );
    expect(view.providers.find((p) => p.providerId === ids.alpha.id)?.standing).toBe('good');
    expect(view.proposals?.find((p) => p.proposalId === proposalId)).toMatchObject({
      status: 'applied',
      reason: 'threshold-met',
      appliedVersion: 2,
    });
    expect(view.health?.activeProviders).toBe(3);
    expect(view.health?.providersInGoodStanding).toBe(2);

    // Four GPUs: only alpha's two are offered (low is below the minimum, beta not a member). It
    // waits, and says why.
    const four = await api.tenant.submitJob(sleepJob('gov-x-four', X, 4, '2.00'));
    const why = await waitingExplanation(four);
    expect(JSON.stringify(why.outcome), explain(four)).toMatch(/below[- ]minimum[- ]stake/i);
    expect(placedOn(four)).toEqual([]);
    await cancel(four);

    // The next job is funded under version 2 and charged the new price, on alpha alone.
    const next = await api.tenant.submitJob(sleepJob('gov-x-next', X, 2, '2.00'));
    const funded = await jobEvent<typeof JobFunded>('job.funded', next);
    expect(funded.subnetVersion).toBe(2);
    expect(funded.terms.pricing).toEqual({
      mode: 'fixed',
      pricePerGpuHour: { [RTX]: X_NEW_PRICE.toString() },
    });
    await expectSettledAt(next, X_NEW_PRICE);
    expect(new Set(placedOn(next))).toEqual(new Set([ids.alpha.id]));
  }, 240_000);

  it('4. the liar is slashed bps of its stake and delegation, pro rata, after the appeal window', async () => {
    const liarId = ids.liar.id;
    await api.delegator.delegate(X, liarId, DELEGATED);
    await withContext(
      c.events.waitFor(
        (e) =>
          e.type === 'subnet.delegated' &&
          (e.data as { providerId: string }).providerId === liarId &&
          (e.data as { delegatorId: string }).delegatorId === DELEGATOR,
        { timeoutMs: 30_000 },
      ),
      liarId,
      'the delegation was not recorded',
    );
    const before = await api.owner.subnet(X);
    expect(before.delegations).toContainEqual(
      expect.objectContaining({
        delegatorId: DELEGATOR,
        providerId: liarId,
        amount: DELEGATED.toString(),
        status: 'active',
      }),
    );
    expect(before.providers.find((p) => p.providerId === liarId)).toMatchObject({
      stake: LIAR_STAKE.toString(),
      delegated: DELEGATED.toString(),
    });

    edges.set(
      'liar',
      await startLyingH100Edge({
        name: 'gov-liar',
        subnets: [X],
        seed: ids.liar.seed,
        natsUrl: NATS_URL,
        prefix: c.nats.prefix,
      }),
    );
    // Both claimed H100s are challenged and fail (no answer by the deadline). A challenge sent while
    // the edge still grinds the one before is declined (BUSY): that is no evidence, and slashes
    // nothing; the GPU is challenged again.
    const failed = await withContext(
      waitFor(
        () => {
          const ended = c.events.items
            .filter(
              (e) =>
                e.type === 'provider.challenged' && (e.data as { providerId: string }).providerId === liarId,
            )
            .map((e) => e.data as PayloadOf<typeof ProviderChallenged>)
            .filter((e) => e.evidence.failure?.kind !== 'declined');
          // The first real failure of each GPU, in the order they ended (the order of their slashes).
          const first = ended.filter((e, i) => ended.findIndex((o) => o.gpuUuid === e.gpuUuid) === i);
          return first.length >= 2 ? first : undefined;
        },
        { timeoutMs: 90_000, description: "the liar's two challenges" },
      ),
      liarId,
      'the liar was not challenged twice',
    );
    expect(failed.map((f) => f.outcome)).toEqual(['failed', 'failed']);

    // Each failed challenge is evidence: a held slash on what the stakes have left after the ones
    // before it, ⌊bps × (own + delegated) / 10 000⌋, split pro rata with floors, the rest on the liar.
    let own = LIAR_STAKE;
    let delegated = DELEGATED;
    const proposed: PayloadOf<typeof SubnetSlashProposed>[] = [];
    for (const challenge of failed) {
      const slash = await withContext(
        awaitSlashProposed(c.events, X, liarId, challenge.challengeId),
        liarId,
        `no slash for challenge ${challenge.challengeId}`,
      );
      const expected = expectedSlash(CLAIM_MISMATCH_BPS, liarId, own, [
        { delegatorId: DELEGATOR, amount: delegated },
      ]);
      expect(slash).toMatchObject({
        bps: CLAIM_MISMATCH_BPS,
        evidence: {
          kind: 'claim-mismatch',
          source: 'challenge',
          jobId: null,
          reference: challenge.challengeId,
        },
        amount: expected.amount.toString(),
        destination: 'treasury',
        beneficiaryId: null,
      });
      expect(byStaker(slash.shares)).toEqual(byStaker(expected.shares));
      expect(Date.parse(slash.appealUntil) - Date.parse(slash.proposedAt)).toBe(APPEAL_SECONDS * 1_000);
      expect(Date.parse(slash.jailedUntil)).toBeGreaterThan(Date.parse(slash.proposedAt));
      const share = (role: SlashShare['role']) => BigInt(slash.shares.find((s) => s.role === role)!.amount);
      own -= share('provider');
      delegated -= share('delegator');
      proposed.push(slash);
    }
    expect(new Set(proposed.map((s) => s.slashId)).size).toBe(2);
    // The first slash on the stakes as they were: 12.34 % of 3 000 003 = 370 200, the delegator's
    // ⌊370 200 × 1 000 003 / 3 000 003⌋ = 123 400, the liar's the rest (246 800, one of it remainder).
    expect(proposed[0]!.amount).toBe('370200');
    expect(byStaker(proposed[0]!.shares)).toEqual(
      byStaker([
        { stakerId: liarId, role: 'provider', amount: '246800' },
        { stakerId: DELEGATOR, role: 'delegator', amount: '123400' },
      ]),
    );

    // Held for the appeal window, then taken by the chain pass: exactly what was proposed.
    let total = 0n;
    for (const slash of proposed) {
      const taken = await withContext(
        awaitSlashTaken(c.events, X, slash.slashId),
        liarId,
        `slash ${slash.slashId} not taken`,
      );
      expect(taken).toMatchObject({
        providerId: liarId,
        jobId: null,
        kind: 'claim-mismatch',
        amount: slash.amount,
        destination: 'treasury',
      });
      expect(byStaker(taken.shares ?? [])).toEqual(byStaker(slash.shares));
      expect(Date.parse(taken.slashedAt)).toBeGreaterThanOrEqual(Date.parse(slash.appealUntil));
      total += BigInt(slash.amount);
    }

    const after = await awaitSubnetView(
      api.owner,
      X,
      (v) =>
        proposed.every((s) => v.slashes?.find((x) => x.slashId === s.slashId)?.status === 'taken') &&
        BigInt(v.treasury) - BigInt(before.treasury) === total,
      'both slashes taken into the treasury',
    );
    expect(after.providers.find((p) => p.providerId === liarId)).toMatchObject({
      stake: own.toString(),
      standing: 'jailed',
    });
    expect(
      after.delegations?.find((d) => d.providerId === liarId && d.delegatorId === DELEGATOR),
    ).toMatchObject({ slashed: (DELEGATED - delegated).toString() });
    expect(after.health?.slashedToTreasury).toBe(total.toString());
    // On the ledger: what the stake accounts hold now (the delegation's account per ADR 0071).
    const { accounts } = await askQuery(
      c.nats.nc,
      SettlementBalancesQuery,
      { accountIds: [`${ASSET}:stake:${liarId}@${X}`, `${ASSET}:stake:${DELEGATOR}@${X}@${liarId}`] },
      { prefix: c.nats.prefix, timeoutMs: 10_000 },
    );
    expect(accounts.map((a) => [a.accountId, a.balance, a.available])).toEqual([
      [`${ASSET}:stake:${liarId}@${X}`, own.toString(), own.toString()],
      [`${ASSET}:stake:${DELEGATOR}@${X}@${liarId}`, delegated.toString(), delegated.toString()],
    ]);
  }, 240_000);

  it('5. an auction job clears at the highest bid among the GPUs placed and settles at it', async () => {
    // Four GPUs need both of Z's edges: bids 0.20 (zed-a) and 0.30 (zed-b), reserve 0.15.
    const jobId = await api.tenant.submitJob(sleepJob('gov-z-auction', Z, 4, '1.00'));
    const funded = await jobEvent<typeof JobFunded>('job.funded', jobId);
    expect(funded.terms.pricing).toEqual({
      mode: 'auction',
      reservePricePerGpuHour: { [RTX]: Z_RESERVE.toString() },
    });
    const placed = await jobEvent<typeof JobPlaced>('job.placed', jobId);
    expect(new Set(placedOn(jobId))).toEqual(new Set([ids.zedA.id, ids.zedB.id]));
    expect(placed.auction).toMatchObject({
      rule: 'uniform-highest-placed-bid',
      clearingPricePerGpuHour: '300000',
    });
    const bids = placed.auction!.bids.map((b) => [nameOf(b.providerId), b.pricePerGpuHour]).sort();
    expect(bids).toEqual([
      ['zedA', '200000'],
      ['zedA', '200000'],
      ['zedB', '300000'],
      ['zedB', '300000'],
    ]);
    const placedGpus = placed.allocations.flatMap((a) => a.nodes.flatMap((n) => n.gpuUuids)).sort();
    expect(placed.auction!.bids.map((b) => b.gpuUuid).sort()).toEqual(placedGpus);
    // Every provider is paid the clearing price, zed-a too.
    const settled = await expectSettledAt(jobId, 300_000n);
    expect(new Set(settled.providers.map((p) => p.providerId))).toEqual(new Set([ids.zedA.id, ids.zedB.id]));
  }, 240_000);

  it('6. the ledger sums to zero per asset and reconciliation never found it off', async () => {
    // A deposit runs a fresh chain pass, which reconciles every asset.
    await api.tenant.deposit(ASSET, 1n);
    const schema = c.cluster.schemas.find((s) => s.endsWith('_settlement'))!;
    const totals = await ledgerTotals(DATABASE_URL, schema);
    expect(totals.map((t) => t.asset)).toContain(ASSET);
    for (const t of totals)
      expect({ asset: t.asset, posted: t.posted, pending: t.pending }).toEqual({
        asset: t.asset,
        posted: 0n,
        pending: 0n,
      });
    expect(reconciliationMismatches(c.events)).toEqual([]);
    // Nothing the suite asked of settlement was refused but the owner's direct update in step 2.
    expect(
      c.events.items
        .filter((e) => e.type === 'subnet.request-rejected')
        .map((e) => (e.data as { request: string }).request),
    ).toEqual(['update-parameters']);
  }, 60_000);
});
