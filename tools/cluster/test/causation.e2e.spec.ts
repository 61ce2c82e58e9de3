import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope } from '@gpunet/contracts';
import { REPO_ROOT } from '@gpunet/netns-testbed';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedEdge, startSimulatedEdge } from '../src';
import {
  type ClusterUnderTest,
  DATABASE_URL,
  jobEnded,
  openEconomy,
  providersOnline,
  rtxHost,
  startCluster,
  SUBNET,
} from './support/cluster-fixture';

const SPEC = 'docs/examples/15-multi-provider-ddp.yaml';
const TENANT = 'tenant-causation';

/** A message of the job as the check sees it: on the wire, or stored in a service's event store. */
interface Traced {
  readonly where: string;
  readonly eventId: string;
  readonly type: string;
  readonly correlationId: string;
  readonly causationId: string | null;
}

/*
 * One job from `POST /v1/jobs` to `job.settled` through every service on its path (gateway,
 * settlement, scheduler, execution, discovery, two provider edges): every message of the job — the
 * events each service published, the private events it kept, the commands sent to the edges and the
 * ranks' statuses — carries the submission's correlation id, and each causation id names a message
 * that exists (one published, sent or stored) or the request that started the chain. Never null.
 */
describe('one correlation from the request to the ranks, and causation that never breaks', () => {
  let c: ClusterUnderTest;
  const edges: SimulatedEdge[] = [];
  const adminKey = `gpn_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  let gateway: string;

  beforeAll(async () => {
    c = await startCluster(
      'causation',
      ['settlement', 'discovery', 'benchmarking', 'scheduler', 'execution', 'gateway'],
      {
        gateway: { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_KEY: adminKey },
        execution: { EXECUTION_USAGE_PERIOD: '2s', EXECUTION_START_BARRIER: '2m' },
      },
    );
    const url = /"url":"([^"]+)"/.exec(c.cluster.service('gateway').output)?.[1];
    if (!url) throw new Error('the gateway did not say where it listens');
    gateway = url;
    for (const name of ['alpha', 'beta'])
      edges.push(
        await startSimulatedEdge({
          name: `causation-${name}`,
          inventory: rtxHost(`causation-${name}`),
          subnets: [SUBNET],
          natsUrl: 'nats://127.0.0.1:4222',
          prefix: c.nats.prefix,
          extraArgs: ['--job-files', REPO_ROOT],
        }),
      );
    await openEconomy(
      c,
      TENANT,
      edges.map((e) => e.edgeId),
    );
    await providersOnline(
      c,
      edges.map((e) => e.edgeId),
    );
  }, 240_000);

  afterAll(async () => {
    for (const e of edges) await e.remove().catch(() => undefined);
    await c?.close();
  }, 60_000);

  const explain = (jobId: string): string =>
    [
      ...c.events.items
        .filter((e) => JSON.stringify(e.data).includes(jobId))
        .map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 300)}`),
      ...c.cluster.options.services.map((s) => `--- ${s}\n${c.cluster.service(s).output.slice(-2000)}`),
      ...edges.map((e) => `--- ${e.name}\n${e.process.output.slice(-2000)}`),
    ].join('\n');

  it('every message of the job carries the submission’s correlation; every cause exists', async () => {
    const created = await fetch(`${gateway}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: TENANT, scopes: ['read', 'submit'], name: 'causation' }),
    });
    expect(created.ok, await created.clone().text()).toBe(true);
    const { key } = (await created.json()) as { key: string };
    const submitted = await fetch(`${gateway}/v1/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/yaml' },
      body: readFileSync(join(REPO_ROOT, SPEC), 'utf8'),
    });
    expect(submitted.status, await submitted.clone().text()).toBe(202);
    const { jobId } = (await submitted.json()) as { jobId: string };
    const correlation = submitted.headers.get('x-correlation-id');
    expect(correlation, 'the gateway says which correlation the request started').toBeTruthy();

    const end = await jobEnded(c, jobId, explain);
    expect(end.type, explain(jobId)).toBe('job.completed');
    await c.events.waitFor((e) => e.type === 'job.settled' && (e.data as { jobId: string }).jobId === jobId, {
      timeoutMs: 60_000,
    });

    // Every message seen on the wire (events, commands, statuses) and every event each service
    // stored (its published and its private ones).
    const wire = [...c.events.items];
    const stored: (Traced & { streamId: string; data: unknown })[] = [];
    const pg = new Client({ connectionString: DATABASE_URL });
    await pg.connect();
    try {
      for (const schema of c.cluster.schemas) {
        const { rows } = await pg.query<{
          event_id: string;
          stream_id: string;
          type: string;
          correlation_id: string;
          causation_id: string | null;
          data: unknown;
        }>(`SELECT event_id, stream_id, type, correlation_id, causation_id, data FROM "${schema}".events`);
        for (const r of rows)
          stored.push({
            where: schema,
            eventId: r.event_id,
            streamId: r.stream_id,
            type: r.type,
            correlationId: r.correlation_id,
            causationId: r.causation_id,
            data: r.data,
          });
      }
    } finally {
      await pg.end();
    }
    const known = new Set([...wire.map((e) => e.eventId), ...stored.map((e) => e.eventId)]);
    const ofJob = (streamId: string, data: unknown): boolean =>
      streamId.endsWith(jobId) || (data as { jobId?: unknown } | null)?.jobId === jobId;
    const messages: Traced[] = [
      ...wire
        .filter((e: Envelope) => ofJob(e.streamId, e.data))
        .map((e) => ({
          where: 'wire',
          eventId: e.eventId,
          type: e.type,
          correlationId: e.correlationId,
          causationId: e.causationId,
        })),
      ...stored.filter((e) => ofJob(e.streamId, e.data)),
    ];
    const types = new Set(messages.map((m) => m.type));
    // The whole path is in what was checked: the request, funding, placement, the edges, the end.
    for (const type of [
      'job.submitted',
      'job.funded',
      'job.queued',
      'job.placed',
      'edge.reserve',
      'edge.start-rank',
      'edge.rank-status',
      'job.running',
      'rank.exited',
      'job.completed',
      'job.settled',
    ])
      expect(types.has(type), `${type} among the job's messages`).toBe(true);

    const submission = messages.find((m) => m.type === 'job.submitted')!;
    expect(submission).toMatchObject({ correlationId: correlation, causationId: correlation });
    const strays = messages.filter((m) => m.correlationId !== correlation);
    expect(strays.map((m) => `${m.where} ${m.type} ${m.correlationId}`)).toEqual([]);
    const broken = messages.filter(
      (m) => m.causationId === null || (m.causationId !== correlation && !known.has(m.causationId)),
    );
    expect(broken.map((m) => `${m.where} ${m.type} caused by ${String(m.causationId)}`)).toEqual([]);
  }, 300_000);
});
