import {
  buildEnvelope,
  FindCandidates,
  GetProvider,
  type PayloadOf,
  type QueryRequest,
  ReservationReplySchema,
  ReserveOnEdge,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { waitFor } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DiscoveryUnderTest,
  type EdgeProcess,
  gpuRequirement,
  metricValue,
  removeEdge,
  startDiscovery,
  startEdgeProcess,
} from './support/harness';

const H100_NODE = `gpus:
  - { model: NVIDIA H100 80GB HBM3, count: 8, vram: 80GiB, compute_capability: "9.0", cuda_version: "12.4", interconnect: nvlink }
host: { cpu_cores: 224, memory: 2TiB }
`;
const A100_NODE = `gpus:
  - { model: NVIDIA A100 80GB PCIe, count: 4, vram: 80GiB, compute_capability: "8.0", cuda_version: "12.2" }
host: { cpu_cores: 64, memory: 512GiB }
`;
const RTX_NODE = `gpus:
  - { model: NVIDIA GeForce RTX 4090, count: 2, vram: 24GiB, compute_capability: "8.9", cuda_version: "12.3" }
host: { cpu_cores: 16, memory: 64GiB }
`;

const WINDOW_MS = 30_000;

describe('discovery with three simulated edges (real NATS, Postgres and edge processes)', () => {
  let d: DiscoveryUnderTest;
  let h100: EdgeProcess;
  let a100: EdgeProcess;
  let rtx: EdgeProcess;

  const ask = (
    request: Partial<QueryRequest<typeof FindCandidates>> & Pick<QueryRequest<typeof FindCandidates>, 'gpu'>,
  ) => askQuery(d.nats.nc, FindCandidates, request, { prefix: d.nats.prefix, timeoutMs: 10_000 });
  const providerIds = async (gpus = '{ count: 1 }') =>
    (await ask({ gpu: gpuRequirement(gpus) })).items.map((i) => i.providerId).sort();
  const lastSeen = async (id: string): Promise<number | null> => {
    const [row] = await d.eventing.db.query<{ last_seen_at: Date | null }>(
      `SELECT last_seen_at FROM "${d.pg.schema}".providers WHERE provider_id = $1`,
      [id],
    );
    return row?.last_seen_at?.getTime() ?? null;
  };
  /** Waits until discovery heard `edges` at the fake clock's current time. */
  const heardNow = async (...edges: EdgeProcess[]) => {
    const now = d.clock.nowMs();
    await waitFor(
      async () => {
        await d.runtime.flushHeartbeats();
        for (const e of edges) if ((await lastSeen(e.edgeId)) !== now) return false;
        return true;
      },
      { description: 'fresh heartbeats', timeoutMs: 15_000 },
    );
  };
  /** Waits for several heartbeat periods, so that nothing a paused edge sent is still on its way. */
  const drain = async () => {
    const before = await metricValue(d.metrics, 'gpunet_discovery_heartbeats_total', { outcome: 'accepted' });
    await waitFor(
      async () =>
        (await metricValue(d.metrics, 'gpunet_discovery_heartbeats_total', { outcome: 'accepted' })) >=
        before + 6,
      {
        description: 'heartbeats of the running edges',
        timeoutMs: 15_000,
      },
    );
    await d.runtime.flushHeartbeats();
  };

  beforeAll(async () => {
    d = await startDiscovery('disc3', { livenessWindowMs: WINDOW_MS });
    const nats = String(d.nats.servers);
    [h100, a100, rtx] = await Promise.all([
      startEdgeProcess({ name: 'h100-node', inventory: H100_NODE, nats, prefix: d.nats.prefix }),
      startEdgeProcess({ name: 'a100-node', inventory: A100_NODE, nats, prefix: d.nats.prefix }),
      startEdgeProcess({ name: 'rtx-node', inventory: RTX_NODE, nats, prefix: d.nats.prefix }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([h100, a100, rtx].filter(Boolean).map((e) => removeEdge(e)));
    await d?.close();
  }, 60_000);

  it('registers the three edges and projects their GPUs', async () => {
    const rows = await waitFor(
      async () => {
        const r = await d.eventing.db.query<{
          provider_id: string;
          status: string;
          simulated: boolean;
          gpus: string;
          offered: string;
        }>(
          `SELECT p.provider_id, p.status, p.simulated, count(g.uuid) AS gpus, count(g.uuid) FILTER (WHERE g.available) AS offered
             FROM "${d.pg.schema}".providers p LEFT JOIN "${d.pg.schema}".gpus g USING (provider_id)
            GROUP BY p.provider_id ORDER BY p.provider_id`,
        );
        return r.length === 3 && r.every((x) => x.status === 'online') ? r : undefined;
      },
      { description: 'three providers online', timeoutMs: 30_000 },
    );
    const byId = new Map(rows.map((r) => [r.provider_id, r]));
    expect(Number(byId.get(h100.edgeId)?.offered)).toBe(8);
    expect(Number(byId.get(a100.edgeId)?.offered)).toBe(4);
    expect(Number(byId.get(rtx.edgeId)?.offered)).toBe(2);
    expect(rows.every((r) => r.simulated)).toBe(true);
    expect(d.errors).toEqual([]);
  });

  it('answers the candidate query for normalized requirements, with paging', async () => {
    // The candidate index follows the projection after its commits (asynchronously): wait for it.
    const all = [h100.edgeId, a100.edgeId, rtx.edgeId].sort();
    await waitFor(async () => JSON.stringify(await providerIds()) === JSON.stringify(all), {
      description: 'the three providers in the candidate index',
      timeoutMs: 15_000,
    });
    expect(await providerIds()).toEqual(all);
    expect(await providerIds('{ count: 1, models: [H100] }')).toEqual([h100.edgeId]);
    expect(await providerIds('{ count: 4, min_vram: 40GB }')).toEqual([h100.edgeId, a100.edgeId].sort());
    expect(await providerIds("{ count: 1, min_compute_capability: '8.9', cuda: '>=12.3' }")).toEqual(
      [h100.edgeId, rtx.edgeId].sort(),
    );
    expect(await providerIds('{ count: 1, vendor: amd }')).toEqual([]);

    const h = (await ask({ gpu: gpuRequirement('{ count: 8, models: [H100] }'), minGpusPerProvider: 8 }))
      .items[0]!;
    expect(h.gpus).toHaveLength(8);
    expect(h.gpus[0]).toMatchObject({
      model: 'NVIDIA H100 80GB HBM3',
      priceFloorMinor: '2500000',
      directPeers: [1, 2, 3, 4, 5, 6, 7],
    });
    expect(h).toMatchObject({ simulated: true, subnets: ['public'], asset: 'USDC', cpuMillicores: 222_000 });

    const cheap = await ask({
      gpu: gpuRequirement('{ count: 1 }'),
      maxPrice: { asset: 'USDC', perGpuHourMinor: '1500000' },
    });
    expect(cheap.items.map((i) => i.providerId).sort()).toEqual([a100.edgeId, rtx.edgeId].sort());
    expect((await ask({ gpu: gpuRequirement('{ count: 1 }'), image: 'docker.io/evil/miner' })).items).toEqual(
      [],
    );
    expect((await ask({ gpu: gpuRequirement('{ count: 1 }'), subnet: 'private' })).items).toEqual([]);

    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { providerId: string }[]; nextCursor: string | null } = await ask({
        gpu: gpuRequirement('{ count: 1 }'),
        limit: 2,
        cursor,
      });
      pages.push(...page.items.map((i) => i.providerId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages).toEqual([h100.edgeId, a100.edgeId, rtx.edgeId].sort());

    // A page stops short of NATS's payload limit and resumes right after its last provider.
    const request = FindCandidates.request.parse({ gpu: gpuRequirement('{ count: 1 }') });
    const small: string[] = [];
    let next: string | null = null;
    let replies = 0;
    do {
      const page: { items: { providerId: string }[]; nextCursor: string | null } =
        d.runtime.candidates.index.query({ ...request, cursor: next }, d.clock.nowMs(), 1_500);
      small.push(...page.items.map((i) => i.providerId));
      next = page.nextCursor;
      replies += 1;
    } while (next !== null);
    expect(small).toEqual([h100.edgeId, a100.edgeId, rtx.edgeId].sort());
    expect(replies).toBeGreaterThanOrEqual(3);
  });

  it('takes a silent edge offline after the window (fake clock) and back online when it returns', async () => {
    rtx.pause();
    await drain();
    const silentSince = await lastSeen(rtx.edgeId);

    d.clock.advance(WINDOW_MS - 1_000);
    await heardNow(h100, a100);
    expect(await d.runtime.sweep()).toEqual({ offline: [], online: [] });
    expect(await lastSeen(rtx.edgeId)).toBe(silentSince);

    d.clock.advance(2_000);
    await heardNow(h100, a100);
    expect(await d.runtime.sweep()).toEqual({ offline: [rtx.edgeId], online: [] });
    expect(await providerIds()).toEqual([h100.edgeId, a100.edgeId].sort());
    const [offline] = await d.eventing.db.query<{ offered: string }>(
      `SELECT count(*) FILTER (WHERE available) AS offered FROM "${d.pg.schema}".gpus WHERE provider_id = $1`,
      [rtx.edgeId],
    );
    expect(Number(offline?.offered)).toBe(0);
    // Not a candidate any more, still a provider: the API's provider view asks for it by id.
    const view = async (id: string) =>
      (
        await askQuery(
          d.nats.nc,
          GetProvider,
          { providerId: id },
          { prefix: d.nats.prefix, timeoutMs: 10_000 },
        )
      ).provider;
    await waitFor(async () => (await view(rtx.edgeId))?.status === 'offline', {
      description: 'the offline provider in the index',
      timeoutMs: 15_000,
    });
    expect(await view(rtx.edgeId)).toMatchObject({
      providerId: rtx.edgeId,
      name: 'rtx-node',
      simulated: true,
      gpus: [
        { model: 'NVIDIA GeForce RTX 4090', available: false },
        { model: 'NVIDIA GeForce RTX 4090', available: false },
      ],
    });
    expect((await view(h100.edgeId))?.gpus.filter((g) => g.available)).toHaveLength(8);
    expect(await view('U'.padEnd(56, 'Z'))).toBeNull();

    rtx.resume();
    d.clock.advance(1_000);
    await heardNow(h100, a100, rtx);
    expect(await d.runtime.sweep()).toEqual({ offline: [], online: [rtx.edgeId] });
    expect(await providerIds()).toEqual([h100.edgeId, a100.edgeId, rtx.edgeId].sort());

    const events = await d.eventing.db.query<{ type: string }>(
      `SELECT type FROM "${d.pg.schema}".events WHERE stream_id = $1 ORDER BY stream_version`,
      [`provider-${rtx.edgeId}`],
    );
    expect(events.map((e) => e.type)).toEqual([
      'provider.registered',
      'provider.online',
      'provider.offline',
      'provider.online',
    ]);
  });

  it('an edge accepts a reservation within its policy, declines one outside it, and discovery stops offering the held GPUs', async () => {
    const reserve = async (data: Partial<PayloadOf<typeof ReserveOnEdge>>) => {
      const envelope = buildEnvelope(
        ReserveOnEdge,
        {
          reservationId: 'r-1',
          jobId: 'job-1',
          gpuUuids: ['SIM-nvidia-0', 'SIM-nvidia-1'],
          cpuMillicores: 8_000,
          memoryBytes: 64 * 1024 ** 3,
          image: 'nvcr.io/nvidia/pytorch:24.05-py3',
          maxDurationMs: 3_600_000,
          subnet: 'public',
          asset: 'USDC',
          pricePerGpuHourMinor: '3000000',
          holdUntil: new Date(Date.now() + 600_000).toISOString(),
          ...data,
        },
        { streamId: 'job-1' },
      );
      const reply = await d.nats.nc.request(
        ReserveOnEdge.subject({ edgeId: a100.edgeId }, d.nats.prefix),
        JSON.stringify(envelope),
        {
          timeout: 10_000,
        },
      );
      return ReservationReplySchema.parse(reply.json());
    };
    const declined = await reserve({
      reservationId: 'r-0',
      image: 'docker.io/evil/miner:1',
      pricePerGpuHourMinor: '1000000',
    });
    expect(declined.outcome).toBe('declined');
    expect(declined.reasons.map((r) => [r.code, r.field])).toEqual([
      ['IMAGE_NOT_ALLOWED', 'image'],
      ['PRICE_BELOW_FLOOR', 'pricePerGpuHourMinor'],
    ]);
    expect(await reserve({})).toEqual({ reservationId: 'r-1', outcome: 'accepted', reasons: [] });
    await waitFor(
      async () => {
        const items = (await ask({ gpu: gpuRequirement('{ count: 1, models: [A100] }') })).items;
        return items[0]?.gpus.length === 2 ? items : undefined;
      },
      { description: 'reserved GPUs to leave the candidate set', timeoutMs: 15_000 },
    );
    const [held] = await d.eventing.db.query<{ reserved: string[] }>(
      `SELECT array_agg(uuid ORDER BY uuid) AS reserved FROM "${d.pg.schema}".gpus WHERE provider_id = $1 AND reserved_by = 'r-1'`,
      [a100.edgeId],
    );
    expect(held?.reserved).toEqual(['SIM-nvidia-0', 'SIM-nvidia-1']);
  });

  it('an edge restarted from its directory keeps its identity and state and is not registered twice', async () => {
    await h100.restart();
    await waitFor(
      async () => {
        const [r] = await d.eventing.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${d.pg.schema}".inbox WHERE consumer = 'discovery-edge-reports'`,
        );
        return Number(r?.n) >= 5;
      },
      { description: 'the second registration to be handled', timeoutMs: 30_000 },
    );
    const events = await d.eventing.db.query<{ type: string }>(
      `SELECT type FROM "${d.pg.schema}".events WHERE stream_id = $1 ORDER BY stream_version`,
      [`provider-${h100.edgeId}`],
    );
    expect(events.map((e) => e.type)).toEqual(['provider.registered', 'provider.online']);
    expect(d.errors).toEqual([]);
  });
});
