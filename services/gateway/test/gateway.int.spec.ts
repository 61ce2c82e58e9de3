import { readFileSync } from 'node:fs';
import {
  GatewayStream,
  GetPlacementExplanation,
  type PlacementExplanationRecord,
  JobCompleted,
  JobFunded,
  JobLaunching,
  JobPlaced,
  JobRunning,
  JobSubmitted,
  JobCancelRequested,
  namespacedStream,
  RankLogChunk,
  SimulatedChainDepositRequest,
  SubnetEconomicsQuery,
  UsageReported,
  buildEnvelope,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import { eventually } from '@gpunet/testing';
import { DeliverPolicy } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../scripts/api-doc';
import { type GatewayHarness, startHarness } from './support/harness';
import { INVALID_SPEC_YAML, NO_BUDGET_SPEC_YAML, VALID_SPEC_JSON, VALID_SPEC_YAML } from './support/fixtures';

const EDGE_A = 'U'.padEnd(56, 'A');
const EDGE_B = 'U'.padEnd(56, 'B');

interface Job {
  jobId: string;
  status: string;
  [k: string]: unknown;
}

describe('gateway over HTTP (NATS + Postgres)', () => {
  let h: GatewayHarness;
  let alice: string;
  let bob: string;
  let reader: string;

  const call = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key, headers, ...rest } = init;
    return fetch(`${h.url}${path}`, {
      ...rest,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key ?? alice}` }),
        ...(headers as Record<string, string> | undefined),
      },
    });
  };
  const submit = (
    body: string,
    type = 'application/yaml',
    extra: Record<string, string> = {},
    key?: string,
  ) =>
    call('/v1/jobs', {
      method: 'POST',
      body,
      headers: { 'content-type': type, ...extra },
      ...(key ? { key } : {}),
    });

  /** The GATEWAY stream's messages of one job, from the start. */
  interface GatewayEvent {
    type: string;
    eventId: string;
    correlationId: string;
    causationId: string | null;
    data: { jobId: string };
  }
  const gatewayEvents = async (jobId: string): Promise<GatewayEvent[]> => {
    const jsm = await h.nats.jsm();
    const js = h.eventing.nats.js;
    const { name } = namespacedStream(GatewayStream, h.nats.prefix);
    const info = await jsm.streams.info(name);
    const found: GatewayEvent[] = [];
    if (info.state.messages === 0) return found;
    const consumer = await js.consumers.get(name, { deliver_policy: DeliverPolicy.All });
    const batch = await consumer.fetch({ max_messages: info.state.messages, expires: 2_000 });
    for await (const m of batch) {
      const env = m.json<GatewayEvent>();
      if (env.data.jobId === jobId) found.push(env);
      if (m.info.pending === 0) break;
    }
    return found;
  };

  beforeAll(async () => {
    h = await startHarness('gateway_http');
    alice = await h.keyFor('tenant-alice', ['read', 'submit'], 'ai');
    bob = await h.keyFor('tenant-bob');
    reader = await h.keyFor('tenant-alice', ['read']);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('serves health, readiness, metrics and the OpenAPI document without a key', async () => {
    expect((await call('/healthz', { key: null })).status).toBe(200);
    const ready = await call('/readyz', { key: null });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', database: true, nats: true });
    // The served document is the published one, byte for byte once formatted.
    const doc = (await (await call('/docs/openapi.json', { key: null })).json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc).toEqual(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')));
    expect((await call('/docs', { key: null })).headers.get('content-type')).toContain('text/html');
    const metrics = await (await call('/metrics', { key: null })).text();
    expect(metrics).toContain('gpunet_gateway_http_requests_total');
  });

  it('keeps the jobs projection on its three durable batch consumers, under their names', () => {
    const consumers = h.service.transport?.describe().consumers ?? [];
    expect(consumers.map((c) => [c.name, c.stream]).sort()).toEqual([
      ['gateway-jobs-execution', 'EXECUTION'],
      ['gateway-jobs-scheduler', 'SCHEDULER'],
      ['gateway-jobs-settlement', 'SETTLEMENT'],
    ]);
  });

  it('answers 401 problem+json for a missing, malformed or unknown key, 403 for a missing scope', async () => {
    for (const key of [null, 'nonsense', `gpn_AAAAAAAAAAAA_${'x'.repeat(43)}`]) {
      const res = await call('/v1/jobs', { key });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    }
    const forbidden = await submit(VALID_SPEC_YAML, 'application/yaml', {}, reader);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: 'FORBIDDEN' });
    const notAdmin = await call('/v1/admin/api-keys', { key: bob });
    expect(notAdmin.status).toBe(403);
  });

  it('submits a YAML spec: JobSubmitted v2 on the GATEWAY stream, the job readable at once', async () => {
    const res = await submit(VALID_SPEC_YAML);
    expect(res.status).toBe(202);
    const job = (await res.json()) as Job;
    expect(res.headers.get('location')).toBe(`/v1/jobs/${job.jobId}`);
    expect(job).toMatchObject({
      status: 'submitted',
      tenantId: 'tenant-alice',
      subnetId: 'ai',
      asset: 'NTX',
      gpus: 4,
      gpuClasses: ['H100'],
      maxPricePerGpuHour: '2500000',
      maxDurationSeconds: 7200,
    });
    const got = await call(`/v1/jobs/${job.jobId}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await got.json()).toMatchObject({ jobId: job.jobId, status: 'submitted' });
    const events = await eventually(async () => {
      const found = await gatewayEvents(job.jobId);
      expect(found).toHaveLength(1);
      return found;
    });
    const envelope = events[0] as unknown as { type: string; version: number; data: Record<string, unknown> };
    expect(envelope.type).toBe(JobSubmitted.type);
    expect(envelope.version).toBe(2);
    expect(JobSubmitted.schema.parse(envelope.data)).toMatchObject({
      jobId: job.jobId,
      gpus: 4,
      tenantId: 'tenant-alice',
    });
    expect((envelope.data.spec as { metadata: { name: string } }).metadata.name).toBe('finetune-h100x4');
    // The request starts the chain: its id is the event's correlation and cause, and the client's.
    const requestId = res.headers.get('x-correlation-id');
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(events[0]).toMatchObject({ correlationId: requestId, causationId: requestId });
    expect(events[0]!.eventId).not.toBe(requestId);
  });

  it('takes a burst of concurrent submissions larger than its database pool (no connection deadlock)', async () => {
    // Each submission holds a pooled connection for its idempotency transaction; anything it needs
    // from the pool inside it would starve a burst of pool-size requests.
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        submit(VALID_SPEC_YAML, 'application/yaml', { 'idempotency-key': `burst-${i}` }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 24 }, () => 202));
    const ids = await Promise.all(responses.map(async (r) => ((await r.json()) as Job).jobId));
    expect(new Set(ids).size).toBe(24);
  });

  it('reads job views concurrently, coalesced, each for its own tenant only', async () => {
    const carol = await h.keyFor('tenant-carol', ['read', 'submit'], 'ai');
    const dave = await h.keyFor('tenant-dave', ['read', 'submit'], 'ai');
    const mine = await Promise.all(
      [carol, carol, dave].map(async (key, i) => {
        const res = await submit(
          VALID_SPEC_YAML,
          'application/yaml',
          { 'idempotency-key': `mixed-${i}` },
          key,
        );
        expect(res.status).toBe(202);
        return { key, jobId: ((await res.json()) as Job).jobId };
      }),
    );
    // Every key asks for every job at once, twice over: the reads share queries, the answers do not.
    const asks = [carol, dave, carol, dave].flatMap((key) => mine.map((job) => ({ key, job })));
    const answers = await Promise.all(asks.map(({ key, job }) => call(`/v1/jobs/${job.jobId}`, { key })));
    expect(answers.map((r) => r.status)).toEqual(asks.map(({ key, job }) => (key === job.key ? 200 : 404)));
    for (const [i, r] of answers.entries())
      if (r.status === 200) expect(((await r.json()) as Job).jobId).toBe(asks[i]!.job.jobId);
  });

  it('accepts JSON specs and uses the tenant default subnet', async () => {
    const res = await submit(VALID_SPEC_JSON, 'application/json');
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ subnetId: 'ai', gpus: 2, gpuClasses: [] });
  });

  it('rejects an invalid spec with 400 problem+json naming each path with line:column', async () => {
    const res = await submit(INVALID_SPEC_YAML);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as {
      code: string;
      errors: { path: string; line?: number; column?: number }[];
    };
    expect(problem.code).toBe('INVALID_SPEC');
    const paths = problem.errors.map((e) => e.path);
    expect(paths).toContain('budget.max_price_per_gpu_hour');
    expect(paths.some((p) => p.startsWith('allocations.trainer.resources'))).toBe(true);
    for (const e of problem.errors) {
      expect(e.line).toBeGreaterThan(0);
      expect(e.column).toBeGreaterThan(0);
    }
    expect(problem.errors.find((e) => e.path === 'budget.max_price_per_gpu_hour')?.line).toBe(9);
  });

  it('refuses failure_recovery fields it does not honour yet with NOT_SUPPORTED, at their line', async () => {
    const spec = `${VALID_SPEC_YAML}    failure_recovery:
      strategy: restart_all
      replace_failed_node: true
      elastic: { min_nodes: 1 }
      checkpoint_env: CKPT
`;
    const res = await submit(spec);
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { path: string; code: string; line?: number }[] };
    const F = 'allocations.trainer.failure_recovery';
    expect(problem.errors.filter((e) => e.code === 'NOT_SUPPORTED')).toEqual([
      expect.objectContaining({ path: `${F}.replace_failed_node`, line: 30 }),
      expect.objectContaining({ path: `${F}.elastic`, line: 31 }),
      expect.objectContaining({ path: `${F}.checkpoint_env`, line: 32 }),
    ]);
  });

  it('rejects a spec without a budget, naming budget; and a bad JSON body', async () => {
    const res = await submit(NO_BUDGET_SPEC_YAML);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { path: string }[] }).errors.map((e) => e.path)).toContain(
      'budget',
    );
    const bad = await submit('{"apiVersion": ', 'application/json');
    expect(bad.status).toBe(400);
    const unsupported = await submit('<xml/>', 'application/xml');
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers 413 problem+json for a body over the limit', async () => {
    const res = await submit(`# ${'x'.repeat(70 * 1024)}\n${VALID_SPEC_YAML}`);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it("hides another tenant's job (404, never 403) in get, list, cancel and events", async () => {
    const job = (await (await submit(VALID_SPEC_YAML)).json()) as Job;
    for (const path of [
      `/v1/jobs/${job.jobId}`,
      `/v1/jobs/${job.jobId}/events`,
      `/v1/jobs/${job.jobId}/spec`,
    ]) {
      const res = await call(path, { key: bob });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const cancel = await call(`/v1/jobs/${job.jobId}/cancel`, { method: 'POST', key: bob });
    expect(cancel.status).toBe(404);
    const list = (await (await call('/v1/jobs', { key: bob })).json()) as { items: Job[] };
    expect(list.items.map((j) => j.jobId)).not.toContain(job.jobId);
  });

  it("explains a job's placement from the scheduler's query: 404 before it, for another tenant, 503 without it", async () => {
    const job = (await (await submit(VALID_SPEC_YAML)).json()) as Job;
    const path = `/v1/jobs/${job.jobId}/explanation`;
    // No scheduler answers yet: the job exists, the explanation is unavailable.
    const unavailable = await call(path);
    expect(unavailable.status).toBe(503);
    expect(await unavailable.json()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    const explanation: PlacementExplanationRecord = {
      jobId: job.jobId,
      status: 'waiting',
      attempt: 0,
      explainedAt: '2030-01-01T00:00:00.000Z',
      outcome: {
        kind: 'failure',
        code: 'Unschedulable',
        allocation: 'main',
        message: '4 GPUs asked; only 2 match',
        reasons: [{ plugin: 'gang-assembly', reason: 'TooFewGpus', message: 'only 2 are free', gpus: null }],
      },
    };
    const asked: string[] = [];
    const served = serveQuery(
      GetPlacementExplanation,
      (request) => {
        asked.push(request.jobId);
        return Promise.resolve({ explanation: request.jobId === job.jobId ? explanation : null });
      },
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
    try {
      await h.nats.nc.flush();
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(explanation);
      // Another tenant's job is no job: the scheduler is not even asked.
      const hidden = await call(path, { key: bob });
      expect(hidden.status).toBe(404);
      expect(asked).toEqual([job.jobId]);
      // A job the scheduler has not tried yet: 404 with a detail that says so.
      const other = (await (await submit(VALID_SPEC_JSON, 'application/json')).json()) as Job;
      const before = await call(`/v1/jobs/${other.jobId}/explanation`);
      expect(before.status).toBe(404);
      expect(before.headers.get('content-type')).toContain('application/problem+json');
      expect(await before.json()).toMatchObject({
        code: 'NOT_FOUND',
        detail: expect.stringMatching(
          /has no placement explanation yet: the scheduler has not tried to place it \(status submitted\)$/,
        ),
      });
    } finally {
      served.unsubscribe();
    }
  });

  it('replays an Idempotency-Key: the same job, one event; another body with the key is 422', async () => {
    const key = `retry-${Date.now()}`;
    const first = await submit(VALID_SPEC_YAML, 'application/yaml', { 'idempotency-key': key });
    const second = await submit(VALID_SPEC_YAML, 'application/yaml', { 'idempotency-key': key });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The replay names the first request's chain, the one its event carries.
    expect(second.headers.get('x-correlation-id')).toBe(first.headers.get('x-correlation-id'));
    const a = (await first.json()) as Job;
    const b = (await second.json()) as Job;
    expect(b.jobId).toBe(a.jobId);
    // Concurrent replays too.
    const concurrent = await Promise.all(
      [1, 2, 3].map(() => submit(VALID_SPEC_YAML, 'application/yaml', { 'idempotency-key': key })),
    );
    for (const r of concurrent) expect(((await r.json()) as Job).jobId).toBe(a.jobId);
    const other = await submit(VALID_SPEC_JSON, 'application/json', { 'idempotency-key': key });
    expect(other.status).toBe(422);
    await eventually(async () => expect(await gatewayEvents(a.jobId)).toHaveLength(1));
    const rows = await h.pg.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1`, [
      `job-${a.jobId}`,
    ]);
    expect(rows.rows[0]).toEqual({ n: 1 });
  });

  it('follows a job through funding, placement, launch and completion, with usage and overlay addresses', async () => {
    const job = (await (await submit(VALID_SPEC_YAML)).json()) as Job;
    const streamId = `job-${job.jobId}`;
    const at = new Date().toISOString();
    const sse = fetch(`${h.url}/v1/jobs/${job.jobId}/events`, {
      headers: { authorization: `Bearer ${alice}` },
    });

    await h.publish(
      JobFunded,
      {
        jobId: job.jobId,
        tenantId: 'tenant-alice',
        subnetId: 'ai',
        subnetVersion: 1,
        asset: 'NTX',
        gpus: 4,
        gpuClasses: ['H100'],
        maxDurationSeconds: 7200,
        escrow: '21000000',
        maxCharge: '20000000',
        subnetFee: '500000',
        platformFee: '500000',
        terms: {
          pricing: { mode: 'fixed', pricePerGpuHour: { H100: '2500000' } },
          maxPricePerGpuHour: '2500000',
          billingIncrementSeconds: 60,
          minimumChargeSeconds: 0,
          subnetFeeBps: 250,
          platformFeeBps: 250,
          lowEscrowBps: 1000,
          slashing: {},
        },
        fundedAt: at,
      },
      streamId,
    );
    // Settlement funds before the scheduler places (streams have no order between them).
    await eventually(async () =>
      expect(await (await call(`/v1/jobs/${job.jobId}`)).json()).toMatchObject({ status: 'funded' }),
    );
    await h.publish(
      JobPlaced,
      {
        jobId: job.jobId,
        tenantId: 'tenant-alice',
        asset: 'NTX',
        allocations: [
          {
            name: 'trainer',
            gpuCount: 4,
            nodes: [
              {
                providerId: EDGE_A,
                hostId: 'host-a',
                gpuUuids: ['GPU-1', 'GPU-2'],
                reservationId: 'r-a',
                ranks: 2,
              },
              {
                providerId: EDGE_B,
                hostId: 'host-b',
                gpuUuids: ['GPU-3', 'GPU-4'],
                reservationId: 'r-b',
                ranks: 2,
              },
            ],
            predictedStepUs: 1000,
            pricePerHourMinor: '10000000',
          },
        ],
        holdUntil: '2030-01-01T00:05:00.000Z',
        attempt: 1,
        at: '2030-01-01T00:00:00.000Z',
      },
      streamId,
    );
    await eventually(async () =>
      expect(await (await call(`/v1/jobs/${job.jobId}`)).json()).toMatchObject({ status: 'placed' }),
    );
    const rank = (i: number, edge: string, host: string, address: string) => ({
      rank: i,
      localRank: i % 2,
      nodeRank: Math.floor(i / 2),
      allocation: 'trainer',
      providerId: edge,
      hostId: host,
      reservationId: edge === EDGE_A ? 'r-a' : 'r-b',
      gpuUuids: [`GPU-${i + 1}`],
      gpuClass: 'H100',
      address,
    });
    await h.publish(
      JobLaunching,
      {
        jobId: job.jobId,
        tenantId: 'tenant-alice',
        attempt: 1,
        worldSize: 4,
        masterAddr: '10.77.0.1',
        masterPort: 29500,
        ranks: [
          rank(0, EDGE_A, 'host-a', '10.77.0.1'),
          rank(1, EDGE_A, 'host-a', '10.77.0.1'),
          rank(2, EDGE_B, 'host-b', '10.77.0.2'),
          rank(3, EDGE_B, 'host-b', '10.77.0.2'),
        ],
        barrierUntil: '2030-01-01T00:01:00.000Z',
        at: '2030-01-01T00:00:01.000Z',
      },
      streamId,
    );
    await h.publish(
      JobRunning,
      { jobId: job.jobId, attempt: 1, runUntil: '2030-01-01T02:00:00.000Z', at: '2030-01-01T00:00:02.000Z' },
      streamId,
    );
    await h.publish(
      UsageReported,
      {
        jobId: job.jobId,
        seq: 1,
        providers: [
          { providerId: EDGE_A, gpuClass: 'H100', gpus: 2, gpuSeconds: 120 },
          { providerId: EDGE_B, gpuClass: 'H100', gpus: 2, gpuSeconds: 118 },
        ],
        reportedAt: '2030-01-01T00:01:00.000Z',
      },
      streamId,
    );
    const running = await eventually(async () => {
      const view = (await (await call(`/v1/jobs/${job.jobId}`)).json()) as Job & {
        usage: { gpuSeconds: number } | null;
        ranks: { address: string }[] | null;
        placement: { allocations: { nodes: { providerId: string }[] }[] } | null;
        cost: { escrow: string | null };
      };
      expect(view.status).toBe('running');
      expect(view.usage?.gpuSeconds).toBe(238);
      return view;
    });
    expect(running.ranks?.map((r) => r.address)).toEqual([
      '10.77.0.1',
      '10.77.0.1',
      '10.77.0.2',
      '10.77.0.2',
    ]);
    expect(running.placement?.allocations[0]?.nodes.map((n) => n.providerId)).toEqual([EDGE_A, EDGE_B]);
    expect(running.cost.escrow).toBe('21000000');

    await h.publish(
      JobCompleted,
      {
        jobId: job.jobId,
        usage: [
          { providerId: EDGE_A, gpuClass: 'H100', gpus: 2, gpuSeconds: 600 },
          { providerId: EDGE_B, gpuClass: 'H100', gpus: 2, gpuSeconds: 590 },
        ],
        faults: [],
        completedAt: '2030-01-01T00:05:00.000Z',
      },
      streamId,
    );
    await eventually(async () =>
      expect(await (await call(`/v1/jobs/${job.jobId}`)).json()).toMatchObject({
        status: 'completed',
        usage: { final: true, gpuSeconds: 1190 },
      }),
    );

    // The SSE stream got the history, in order, and ended with the job.
    const text = await (await sse).text();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(types).toEqual([
      'job.submitted',
      'job.funded',
      'job.placed',
      'job.launching',
      'job.running',
      'usage.reported',
      'job.completed',
      'end',
    ]);

    // Resuming after the third event (Last-Event-ID) sends the rest only.
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
    const resumed = await (
      await call(`/v1/jobs/${job.jobId}/events`, { headers: { 'last-event-id': ids[2]! } })
    ).text();
    expect([...resumed.matchAll(/^event: (.+)$/gm)].map((m) => m[1])).toEqual([
      'job.launching',
      'job.running',
      'usage.reported',
      'job.completed',
      'end',
    ]);

    const listed = (await (await call('/v1/jobs?status=completed')).json()) as { items: Job[] };
    expect(listed.items.map((j) => j.jobId)).toContain(job.jobId);
    expect(await (await call(`/v1/jobs/${job.jobId}/cancel`, { method: 'POST' })).json()).toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('cancels a job once: JobCancelRequested on the GATEWAY stream', async () => {
    const job = (await (await submit(VALID_SPEC_YAML)).json()) as Job;
    const body = JSON.stringify({ reason: 'wrong dataset' });
    const headers = { 'content-type': 'application/json' };
    const first = await call(`/v1/jobs/${job.jobId}/cancel`, { method: 'POST', body, headers });
    expect(first.status).toBe(202);
    expect(((await first.json()) as { cancelRequestedAt: string | null }).cancelRequestedAt).not.toBeNull();
    const again = await call(`/v1/jobs/${job.jobId}/cancel`, { method: 'POST', body, headers });
    expect(again.status).toBe(202);
    const events = await eventually(async () => {
      const found = await gatewayEvents(job.jobId);
      expect(found.map((e) => e.type)).toEqual(['job.submitted', JobCancelRequested.type]);
      return found;
    });
    expect(events[1]).toMatchObject({
      data: { jobId: job.jobId, tenantId: 'tenant-alice', reason: 'wrong dataset' },
      correlationId: first.headers.get('x-correlation-id'),
      causationId: first.headers.get('x-correlation-id'),
    });
  });

  it('a subnet creation settlement refused: its requester gets 404 with the reason, anyone else a plain 404', async () => {
    const message =
      "parameters.trust.simulatedGpus: 'allowed' only in a subnet whose asset settles no real value; NTX does (test assets: none)";
    const served = serveQuery(
      SubnetEconomicsQuery,
      ({ subnetId }) =>
        Promise.resolve({
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
          lastRejection: {
            request: 'create' as const,
            requesterId: 'tenant-alice',
            reason: 'invalid-parameters' as const,
            message,
            rejectedAt: '2030-01-01T00:00:00.000Z',
          },
        }),
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
    try {
      await h.nats.nc.flush();
      const mine = await call('/v1/subnets/live');
      expect(mine.status).toBe(404);
      expect(mine.headers.get('content-type')).toContain('application/problem+json');
      expect(await mine.json()).toMatchObject({
        code: 'NOT_FOUND',
        detail: `no subnet live: its creation was rejected (invalid-parameters): ${message}`,
      });
      const theirs = await call('/v1/subnets/live', { key: bob });
      expect(theirs.status).toBe(404);
      expect(await theirs.json()).toMatchObject({ detail: 'no subnet live' });
    } finally {
      served.unsubscribe();
    }
  });

  it('records a subnet join as the first event of its request’s chain', async () => {
    const res = await call('/v1/subnets/ai/join', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `join-${Date.now()}` },
      body: JSON.stringify({ stake: '1000' }),
    });
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { requestId: string; type: string };
    expect(accepted.type).toBe('subnet.join-requested');
    expect(res.headers.get('x-correlation-id')).toBe(accepted.requestId);
    const { rows } = await h.pg.pool.query<{
      correlation_id: string;
      causation_id: string;
      event_id: string;
    }>(
      `SELECT correlation_id, causation_id, event_id FROM events
       WHERE stream_id = 'subnet-ai' AND type = 'subnet.join-requested'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ correlation_id: accepted.requestId, causation_id: accepted.requestId });
    expect(rows[0]!.event_id).not.toBe(accepted.requestId);
  });

  it('streams rank logs from JOB_LOGS', async () => {
    const job = (await (await submit(VALID_SPEC_YAML)).json()) as Job;
    const chunk = (seq: number, line: string) =>
      buildEnvelope(
        RankLogChunk,
        {
          jobId: job.jobId,
          attempt: 1,
          rank: 0,
          stream: 'stdout',
          seq,
          lines: [line],
          dropped: 0,
          at: '2030-01-01T00:00:00.000Z',
        },
        { streamId: `job-${job.jobId}` },
      );
    const subject = RankLogChunk.subject({ edgeId: EDGE_A, jobId: job.jobId }, h.nats.prefix);
    for (const [i, line] of ['step 1 loss 2.3', 'step 2 loss 2.1'].entries()) {
      const env = chunk(i + 1, line);
      await h.eventing.nats.js.publish(subject, JSON.stringify(env), { msgID: env.eventId });
    }
    const text = await (await call(`/v1/jobs/${job.jobId}/logs`)).text();
    expect(text).toContain('step 1 loss 2.3');
    expect(text).toContain('step 2 loss 2.1');
    expect(text).toContain('event: end');

    // Resuming (Last-Event-ID = the first chunk's JOB_LOGS sequence) sends the rest only.
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]!);
    expect(ids).toHaveLength(2);
    const resumed = await (
      await call(`/v1/jobs/${job.jobId}/logs`, { headers: { 'last-event-id': ids[0]! } })
    ).text();
    expect(resumed).not.toContain('step 1 loss 2.3');
    expect(resumed).toContain(`id: ${ids[1]}\n`);
    expect(resumed).toContain('event: end');
    const caughtUp = await (await call(`/v1/jobs/${job.jobId}/logs?after=${ids[1]}`)).text();
    expect(caughtUp).not.toContain('event: log');
    expect(caughtUp).toContain('event: end');
  });

  it('creates, lists and revokes API keys (secrets never listed); lists jobs page by page', async () => {
    const created = await call('/v1/admin/api-keys', {
      method: 'POST',
      key: h.adminKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: 'tenant-carol', scopes: ['read', 'submit'], name: 'ci' }),
    });
    expect(created.status).toBe(201);
    const { key, apiKey } = (await created.json()) as { key: string; apiKey: { keyId: string } };
    expect((await call('/v1/jobs', { key })).status).toBe(200);
    const listed = await (await call('/v1/admin/api-keys?tenant=tenant-carol', { key: h.adminKey })).text();
    expect(listed).toContain(apiKey.keyId);
    expect(listed).not.toContain(key);
    expect(
      (await call(`/v1/admin/api-keys/${apiKey.keyId}`, { method: 'DELETE', key: h.adminKey })).status,
    ).toBe(204);
    expect((await call('/v1/jobs', { key })).status).toBe(401);

    for (let i = 0; i < 3; i++)
      expect((await submit(VALID_SPEC_YAML, 'application/yaml', {}, bob)).status).toBe(202);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (
        await call(`/v1/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: bob })
      ).json()) as { items: Job[]; nextCursor: string | null };
      seen.push(...page.items.map((j) => j.jobId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
    expect((await call('/v1/jobs?status=bogus', { key: bob })).status).toBe(400);
    const badCursor = await call('/v1/jobs?cursor=not-ours', { key: bob });
    expect(badCursor.status).toBe(400);
    expect(await badCursor.json()).toMatchObject({ errors: [{ path: 'query.cursor' }] });
  });

  it('rate-limits per key with 429 and Retry-After', async () => {
    const limited = await startHarness('gateway_rate', { rateLimitPerSecond: 0.001, rateLimitBurst: 3 });
    try {
      const key = await limited.keyFor('tenant-r');
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${limited.url}/v1/jobs`, { headers: { authorization: `Bearer ${key}` } });
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      // Failed authentications are limited per client address too.
      const anonymous: number[] = [];
      for (let i = 0; i < 5; i++)
        anonymous.push(
          (await fetch(`${limited.url}/v1/jobs`, { headers: { authorization: 'Bearer guess' } })).status,
        );
      expect(anonymous).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it("deposits to the caller's own wallet through settlement's simulated chain, once per Idempotency-Key", async () => {
    const deposit = (body: unknown, key: string | undefined, apiKey = alice) =>
      call('/v1/accounts/deposits', {
        method: 'POST',
        key: apiKey,
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      });
    // Without settlement on the simulated chain: 503, and the message says where deposits go.
    const unavailable = await deposit({ asset: 'NTX', amount: '1000000' }, 'dep-none');
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('content-type')).toContain('application/problem+json');
    expect(await unavailable.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringContaining('wallet'),
    });

    // Settlement's answer, as its simulated chain gives it.
    const asked: unknown[] = [];
    let available = 0n;
    const served = serveQuery(
      SimulatedChainDepositRequest,
      (request) => {
        asked.push(request);
        available += BigInt(request.amount);
        return Promise.resolve({ chainTxId: `sim-${asked.length}`, available: available.toString() });
      },
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
    try {
      await h.nats.nc.flush();
      const first = await deposit({ asset: 'NTX', amount: '1000000' }, 'dep-1');
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({
        chainTxId: 'sim-1',
        ownerId: 'tenant-alice',
        asset: 'NTX',
        amount: '1000000',
        available: '1000000',
      });
      // The same key again (and the key that failed above, now answered) → one deposit each.
      const replay = await deposit({ asset: 'NTX', amount: '1000000' }, 'dep-1');
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(((await replay.json()) as { chainTxId: string }).chainTxId).toBe('sim-1');
      expect((await deposit({ asset: 'NTX', amount: '500' }, 'dep-none')).status).toBe(201);
      expect(asked).toEqual([
        { ownerId: 'tenant-alice', asset: 'NTX', amount: '1000000' },
        { ownerId: 'tenant-alice', asset: 'NTX', amount: '500' },
      ]);
      // Another body with a used key; bad amounts; a key without the submit scope.
      expect((await deposit({ asset: 'NTX', amount: '7' }, 'dep-1')).status).toBe(422);
      for (const body of [
        { asset: 'NTX', amount: '1.5' },
        { asset: 'NTX', amount: 100 },
        { asset: 'ntx', amount: '1' },
        { asset: 'NTX', amount: '1', ownerId: 'tenant-bob' },
      ]) {
        const bad = await deposit(body, undefined);
        expect(bad.status).toBe(400);
        expect(await bad.json()).toMatchObject({ code: 'INVALID_REQUEST' });
      }
      expect((await deposit({ asset: 'NTX', amount: '1' }, undefined, reader)).status).toBe(403);
      expect(asked).toHaveLength(2);
    } finally {
      served.unsubscribe();
    }
  });

  it('answers 503 problem+json when settlement does not answer a query', async () => {
    const res = await call('/v1/accounts/balances');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });
});
