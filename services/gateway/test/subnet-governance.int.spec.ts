import {
  AccountStatementQuery,
  type MessageDefinition,
  type QueryRequest,
  type QueryResponse,
  SubnetDelegationRequested,
  SubnetEconomicsQuery,
  SubnetLeaveRequested,
  SubnetParametersUpdateRequested,
  SubnetProposalRequested,
  SubnetUndelegationRequested,
  SubnetVoteRequested,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SLASH_ID as SLASH,
  SUBNET_PARAMETERS as PARAMETERS,
  subnetEconomicsFixture,
  unknownSubnetFixture,
} from './support/fixtures';
import { type GatewayHarness, startHarness } from './support/harness';

const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Settlement's view of subnet `gov` (the fixture), any other subnet being unknown. */
const economicsOf = (subnetId: string): QueryResponse<typeof SubnetEconomicsQuery> =>
  subnetId === 'gov' ? subnetEconomicsFixture('gov') : unknownSubnetFixture(subnetId);

interface Recorded {
  stream_id: string;
  type: string;
  data: Record<string, unknown>;
  correlation_id: string;
  causation_id: string;
}

describe('subnet governance over HTTP (NATS + Postgres)', () => {
  let h: GatewayHarness;
  let alice: string;
  let bob: string;
  let reader: string;

  const call = (
    path: string,
    init: { method?: string; body?: unknown; key?: string; headers?: Record<string, string> } = {},
  ) =>
    fetch(`${h.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.key ?? alice}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined
        ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
        : {}),
    });

  /** What the request with this id appended: the events of its chain in the event store. */
  const recorded = async (requestId: string): Promise<Recorded[]> =>
    (
      await h.pg.pool.query<Recorded>(
        `SELECT stream_id, type, data, correlation_id, causation_id FROM events
         WHERE correlation_id = $1 ORDER BY global_position`,
        [requestId],
      )
    ).rows;

  const subnetEventCount = async (): Promise<number> =>
    Number(
      (
        await h.pg.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM events WHERE stream_id LIKE 'subnet-%'`,
        )
      ).rows[0]!.n,
    );

  beforeAll(async () => {
    h = await startHarness('gateway_subnet_gov');
    alice = await h.keyFor('tenant-alice');
    bob = await h.keyFor('tenant-bob');
    reader = await h.keyFor('tenant-alice', ['read']);
  });

  afterAll(async () => {
    await h?.close();
  });

  const requests: {
    readonly name: string;
    readonly method: 'POST' | 'DELETE';
    readonly path: string;
    readonly body?: unknown;
    readonly def: MessageDefinition;
    readonly data: Record<string, unknown>;
  }[] = [
    {
      name: "the owner's parameters update",
      method: 'POST',
      path: '/v1/subnets/gov/parameters',
      body: { parameters: PARAMETERS },
      def: SubnetParametersUpdateRequested,
      data: {
        subnetId: 'gov',
        ownerId: 'tenant-alice',
        // The parameters as the gateway parsed them: the defaults of what the body left out filled in.
        parameters: {
          ...PARAMETERS,
          trust: { simulatedGpus: 'refused', verifiedGpus: 'required', spotChecksPerGpuHour: 1 },
          slashingPolicy: { appealSeconds: 0, destination: 'treasury', jailSeconds: 0 },
        },
      },
    },
    {
      name: 'a leave',
      method: 'POST',
      path: '/v1/subnets/gov/leave',
      def: SubnetLeaveRequested,
      data: { subnetId: 'gov', providerId: 'tenant-alice' },
    },
    {
      name: 'a proposal with its own id',
      method: 'POST',
      path: '/v1/subnets/gov/proposals',
      body: {
        proposalId: 'p-fee',
        title: 'lower the fee',
        change: { kind: 'parameters', parameters: PARAMETERS },
      },
      def: SubnetProposalRequested,
      data: {
        subnetId: 'gov',
        proposalId: 'p-fee',
        proposerId: 'tenant-alice',
        title: 'lower the fee',
        change: { kind: 'parameters', parameters: { ...PARAMETERS } },
      },
    },
    {
      name: 'a vote',
      method: 'POST',
      path: '/v1/subnets/gov/proposals/p-fee/votes',
      body: { choice: 'abstain' },
      def: SubnetVoteRequested,
      data: { subnetId: 'gov', proposalId: 'p-fee', voterId: 'tenant-alice', choice: 'abstain' },
    },
    {
      name: 'a delegation',
      method: 'POST',
      path: '/v1/subnets/gov/delegations',
      body: { providerId: EDGE_A, amount: '700000' },
      def: SubnetDelegationRequested,
      data: { subnetId: 'gov', delegatorId: 'tenant-alice', providerId: EDGE_A, amount: '700000' },
    },
    {
      name: 'an undelegation',
      method: 'DELETE',
      path: `/v1/subnets/gov/delegations/${EDGE_A}`,
      def: SubnetUndelegationRequested,
      data: { subnetId: 'gov', delegatorId: 'tenant-alice', providerId: EDGE_A },
    },
    {
      name: 'an appeal with a title and id',
      method: 'POST',
      path: `/v1/subnets/gov/slashes/${SLASH}/appeal`,
      body: { title: 'the host was up', proposalId: 'appeal-1' },
      def: SubnetProposalRequested,
      data: {
        subnetId: 'gov',
        proposalId: 'appeal-1',
        proposerId: 'tenant-alice',
        title: 'the host was up',
        change: { kind: 'overturn-slash', slashId: SLASH },
      },
    },
  ];

  it.each(requests)(
    'records $name as the first event of its chain on subnet-gov, the caller as its actor',
    async ({ method, path, body, def, data }) => {
      const { type } = def;
      const res = await call(path, { method, body, headers: { 'idempotency-key': `k-${path}-${method}` } });
      expect(res.status, await res.clone().text()).toBe(202);
      const accepted = (await res.json()) as { requestId: string; type: string; status: string };
      expect(accepted).toMatchObject({ type, status: 'accepted' });
      expect(res.headers.get('x-correlation-id')).toBe(accepted.requestId);
      const rows = await recorded(accepted.requestId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        stream_id: 'subnet-gov',
        type,
        causation_id: accepted.requestId,
        data: { ...data, requestedAt: expect.any(String) },
      });
      // The event as recorded is the contract's, with nothing more in it.
      expect(def.schema.safeParse(rows[0]!.data).success).toBe(true);
      expect(Object.keys(rows[0]!.data).sort()).toEqual([...Object.keys(data), 'requestedAt'].sort());
    },
  );

  it('generates a proposal id when none is given, returns it, and a replay returns the same one', async () => {
    const body = { title: 'a new fee', change: { kind: 'parameters', parameters: PARAMETERS } };
    const headers = { 'idempotency-key': 'propose-generated' };
    const first = await call('/v1/subnets/gov/proposals', { method: 'POST', body, headers });
    expect(first.status).toBe(202);
    const accepted = (await first.json()) as { requestId: string; proposalId: string; detail: string };
    expect(accepted.proposalId).toMatch(UUID);
    expect(accepted.detail).toContain(`/v1/subnets/gov/proposals/${accepted.proposalId}`);
    const replay = await call('/v1/subnets/gov/proposals', { method: 'POST', body, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(accepted);
    const rows = await recorded(accepted.requestId);
    expect(rows.map((r) => r.data['proposalId'])).toEqual([accepted.proposalId]);

    // An appeal without a body: a generated id and the default title.
    const appeal = await call(`/v1/subnets/gov/slashes/${SLASH}/appeal`, { method: 'POST' });
    expect(appeal.status).toBe(202);
    const a = (await appeal.json()) as { requestId: string; proposalId: string };
    expect(a.proposalId).toMatch(UUID);
    expect((await recorded(a.requestId))[0]!.data).toMatchObject({
      proposalId: a.proposalId,
      proposerId: 'tenant-alice',
      title: `appeal against ${SLASH}`,
      change: { kind: 'overturn-slash', slashId: SLASH },
    });
  });

  it("records the request of whoever calls: bob's vote is bob's", async () => {
    const vote = await call('/v1/subnets/gov/proposals/p-fee/votes', {
      method: 'POST',
      key: bob,
      body: { choice: 'yes' },
    });
    const { requestId } = (await vote.json()) as { requestId: string };
    expect((await recorded(requestId))[0]!.data).toMatchObject({ voterId: 'tenant-bob', choice: 'yes' });
  });

  it('takes many requests on one subnet at once: each is recorded, none fails on another', async () => {
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        call(`/v1/subnets/busy/${i % 2 === 0 ? 'leave' : 'delegations'}`, {
          method: 'POST',
          key: i % 4 < 2 ? alice : bob,
          ...(i % 2 === 0 ? {} : { body: { providerId: EDGE_A, amount: String(i) } }),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 16 }, () => 202));
    const { rows } = await h.pg.pool.query<{ n: string; versions: string }>(
      `SELECT count(*) AS n, count(DISTINCT stream_version) AS versions FROM events WHERE stream_id = 'subnet-busy'`,
    );
    expect(rows[0]).toEqual({ n: '16', versions: '16' });
  });

  const invalid: {
    readonly name: string;
    readonly method: 'POST' | 'DELETE' | 'GET';
    readonly path: string;
    readonly body?: unknown;
    readonly paths: readonly string[];
  }[] = [
    { name: 'parameters: no body', method: 'POST', path: '/v1/subnets/gov/parameters', paths: ['body'] },
    {
      name: 'parameters: a fee above 50 %',
      method: 'POST',
      path: '/v1/subnets/gov/parameters',
      body: { parameters: { ...PARAMETERS, subnetFeeBps: 9000 } },
      paths: ['body.parameters.subnetFeeBps'],
    },
    {
      name: 'parameters: a threshold of half',
      method: 'POST',
      path: '/v1/subnets/gov/parameters',
      body: { parameters: { ...PARAMETERS, governance: { ...PARAMETERS.governance, thresholdBps: 5000 } } },
      paths: ['body.parameters.governance.thresholdBps'],
    },
    {
      name: 'parameters: an owner named in the body',
      method: 'POST',
      path: '/v1/subnets/gov/parameters',
      body: { parameters: PARAMETERS, ownerId: 'tenant-bob' },
      paths: ['body'],
    },
    {
      name: 'leave: a body',
      method: 'POST',
      path: '/v1/subnets/gov/leave',
      body: { providerId: 'tenant-bob' },
      paths: ['body'],
    },
    {
      name: 'proposal: an empty title, no change',
      method: 'POST',
      path: '/v1/subnets/gov/proposals',
      body: { title: '' },
      paths: ['body.title', 'body.change'],
    },
    {
      name: 'proposal: an unknown change kind',
      method: 'POST',
      path: '/v1/subnets/gov/proposals',
      body: { title: 't', change: { kind: 'dissolve' } },
      paths: ['body.change.kind'],
    },
    {
      name: 'proposal: a bad id and a bad slash id',
      method: 'POST',
      path: '/v1/subnets/gov/proposals',
      body: { proposalId: 'has space', title: 't', change: { kind: 'overturn-slash', slashId: 'slash-1' } },
      paths: ['body.proposalId', 'body.change.slashId'],
    },
    {
      name: 'proposal: a proposer named in the body',
      method: 'POST',
      path: '/v1/subnets/gov/proposals',
      body: { title: 't', change: { kind: 'overturn-slash', slashId: SLASH }, proposerId: 'tenant-bob' },
      paths: ['body'],
    },
    {
      name: 'vote: not yes, no or abstain',
      method: 'POST',
      path: '/v1/subnets/gov/proposals/p-fee/votes',
      body: { choice: 'maybe' },
      paths: ['body.choice'],
    },
    {
      name: 'vote: a bad proposal id',
      method: 'POST',
      path: '/v1/subnets/gov/proposals/bad%20id/votes',
      body: { choice: 'yes' },
      paths: ['path.proposalId'],
    },
    {
      name: 'delegation: nothing delegated',
      method: 'POST',
      path: '/v1/subnets/gov/delegations',
      body: { providerId: EDGE_A, amount: '0' },
      paths: ['body.amount'],
    },
    {
      name: 'delegation: a fraction',
      method: 'POST',
      path: '/v1/subnets/gov/delegations',
      body: { providerId: EDGE_A, amount: '1.5' },
      paths: ['body.amount'],
    },
    {
      name: 'delegation: a number, no provider',
      method: 'POST',
      path: '/v1/subnets/gov/delegations',
      body: { amount: 5 },
      paths: ['body.providerId', 'body.amount'],
    },
    {
      name: 'undelegation: a bad provider id',
      method: 'DELETE',
      path: '/v1/subnets/gov/delegations/bad%21',
      paths: ['path.providerId'],
    },
    {
      name: 'appeal: a bad slash id',
      method: 'POST',
      path: '/v1/subnets/gov/slashes/slash-xyz/appeal',
      paths: ['path.slashId'],
    },
    {
      name: 'appeal: an empty title',
      method: 'POST',
      path: `/v1/subnets/gov/slashes/${SLASH}/appeal`,
      body: { title: '' },
      paths: ['body.title'],
    },
    {
      name: 'statement: limit 0',
      method: 'GET',
      path: '/v1/subnets/gov/statement?limit=0',
      paths: ['query.limit'],
    },
    {
      name: 'proposals: a bad subnet id',
      method: 'GET',
      path: '/v1/subnets/bad%21/proposals',
      paths: ['path.subnetId'],
    },
    {
      name: 'proposal: a bad proposal id',
      method: 'GET',
      path: '/v1/subnets/gov/proposals/bad%21',
      paths: ['path.proposalId'],
    },
  ];

  it.each(invalid)(
    'refuses $name with 400 naming the field, appending nothing',
    async ({ method, path, body, paths }) => {
      const before = await subnetEventCount();
      const res = await call(path, { method, body });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await res.json()) as { code: string; errors: { path: string; message: string }[] };
      expect(problem.code).toBe('INVALID_REQUEST');
      expect(problem.errors.map((e) => e.path)).toEqual(paths);
      for (const e of problem.errors) expect(e.message).not.toBe('');
      expect(await subnetEventCount()).toBe(before);
    },
  );

  it('asks for the submit scope to write and the read scope to read', async () => {
    const before = await subnetEventCount();
    for (const [method, path, body] of [
      ['POST', '/v1/subnets/gov/parameters', { parameters: PARAMETERS }],
      ['POST', '/v1/subnets/gov/leave', undefined],
      ['POST', '/v1/subnets/gov/proposals/p-fee/votes', { choice: 'yes' }],
      ['POST', '/v1/subnets/gov/delegations', { providerId: EDGE_A, amount: '1' }],
      ['DELETE', `/v1/subnets/gov/delegations/${EDGE_A}`, undefined],
      ['POST', `/v1/subnets/gov/slashes/${SLASH}/appeal`, undefined],
    ] as const) {
      const res = await call(path, { method, body, key: reader });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(await subnetEventCount()).toBe(before);
  });

  describe("reads, from settlement's subnet economics", () => {
    const asked: QueryRequest<typeof AccountStatementQuery>[] = [];
    const subscriptions: { unsubscribe(): void }[] = [];

    beforeAll(async () => {
      const options = { nc: h.nats.nc, prefix: h.nats.prefix };
      subscriptions.push(
        serveQuery(SubnetEconomicsQuery, ({ subnetId }) => Promise.resolve(economicsOf(subnetId)), options),
        serveQuery(
          AccountStatementQuery,
          (request) => {
            asked.push(request);
            const owner = request.accountId.split(':')[2]!;
            return Promise.resolve({
              account: {
                accountId: request.accountId,
                asset: 'NTX',
                purpose: 'stake' as const,
                ownerId: owner,
                debitsPending: '0',
                debitsPosted: '0',
                creditsPending: '0',
                creditsPosted: '700000',
                balance: '700000',
                available: '700000',
              },
              entries: [
                {
                  transferId: `delegate:${owner}`,
                  sequence: 7,
                  kind: 'posted' as const,
                  code: 'delegate',
                  debitAccountId: 'NTX:wallet:tenant-alice',
                  creditAccountId: request.accountId,
                  amount: '700000',
                  pendingId: null,
                  jobId: null,
                  at: '2030-01-01T00:00:00.000Z',
                  direction: 'credit' as const,
                },
              ],
              nextAfterSequence: null,
            });
          },
          options,
        ),
      );
      await h.nats.nc.flush();
    });

    afterAll(() => {
      for (const s of subscriptions) s.unsubscribe();
    });

    it("shows the subnet's standing, delegations, proposals, slashes and health; the last rejection to its requester only", async () => {
      const mine = await call('/v1/subnets/gov');
      expect(mine.status).toBe(200);
      const expected = economicsOf('gov');
      expect(await mine.json()).toEqual(expected);
      const theirs = await call('/v1/subnets/gov', { key: bob });
      expect(await theirs.json()).toEqual({ ...expected, lastRejection: null });
      const none = await call('/v1/subnets/nope');
      expect(none.status).toBe(404);
      expect(await none.json()).toMatchObject({ code: 'NOT_FOUND', detail: 'no subnet nope' });
    });

    it('lists the proposals and shows one; an unknown one or subnet is a 404', async () => {
      const list = await call('/v1/subnets/gov/proposals', { key: reader });
      expect(list.status).toBe(200);
      expect(await list.json()).toEqual({ items: economicsOf('gov').proposals });
      const one = await call('/v1/subnets/gov/proposals/p-old', { key: bob });
      expect(await one.json()).toEqual(economicsOf('gov').proposals![1]);
      const unknown = await call('/v1/subnets/gov/proposals/p-none');
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ detail: 'no proposal p-none in subnet gov' });
      expect((await call('/v1/subnets/nope/proposals')).status).toBe(404);
      expect((await call('/v1/subnets/nope/proposals/p-fee')).status).toBe(404);
    });

    it("states the caller's own stake account and its delegations' accounts, and no one else's", async () => {
      asked.length = 0;
      const res = await call('/v1/subnets/gov/statement?afterSequence=3&limit=10', { key: reader });
      expect(res.status).toBe(200);
      const statement = (await res.json()) as {
        subnetId: string;
        asset: string;
        accounts: { accountId: string; role: string; providerId: string | null; entries: unknown[] }[];
      };
      expect(statement).toMatchObject({ subnetId: 'gov', asset: 'NTX' });
      expect(statement.accounts.map((a) => [a.role, a.providerId, a.accountId])).toEqual([
        ['stake', null, 'NTX:stake:tenant-alice@gov'],
        ['delegation', EDGE_A, `NTX:stake:tenant-alice@gov@${EDGE_A}`],
        ['delegation', EDGE_B, `NTX:stake:tenant-alice@gov@${EDGE_B}`],
      ]);
      expect(statement.accounts.every((a) => a.entries.length === 1)).toBe(true);
      expect(asked.map((a) => [a.accountId, a.afterSequence, a.limit]).sort()).toEqual(
        [
          ['NTX:stake:tenant-alice@gov', 3, 10],
          [`NTX:stake:tenant-alice@gov@${EDGE_A}`, 3, 10],
          [`NTX:stake:tenant-alice@gov@${EDGE_B}`, 3, 10],
        ].sort(),
      );

      asked.length = 0;
      const bobs = (await (await call('/v1/subnets/gov/statement', { key: bob })).json()) as {
        accounts: { accountId: string }[];
      };
      expect(bobs.accounts.map((a) => a.accountId)).toEqual([
        'NTX:stake:tenant-bob@gov',
        `NTX:stake:tenant-bob@gov@${EDGE_B}`,
      ]);
      expect(asked.map((a) => [a.accountId, a.afterSequence, a.limit]).sort()).toEqual(
        [
          ['NTX:stake:tenant-bob@gov', 0, 100],
          [`NTX:stake:tenant-bob@gov@${EDGE_B}`, 0, 100],
        ].sort(),
      );
      expect((await call('/v1/subnets/nope/statement')).status).toBe(404);
    });
  });
});
