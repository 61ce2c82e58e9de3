import {
  type CandidateProvider,
  FindCandidates,
  FindGpuVerification,
  GetProvider,
  GetProviderTrust,
  type ProviderTrust,
  type ProviderView,
  type QueryResponse,
} from '@gpunet/contracts';
import { serveQuery } from '@gpunet/eventing';
import type { Subscription } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayHarness, startHarness } from './support/harness';

/*
 * `GET /v1/providers/{providerId}` and `GET /v1/providers`: the real gateway over real NATS.
 * Discovery's provider and candidates queries and benchmarking's trust and GPU-verification queries
 * are answered by stand-ins on their (namespaced) subjects: `serveQuery`
 * checks each answer against the query's contract in `@gpunet/contracts`, so what they send is what
 * the real services may send. The real trust responder lives in services/benchmarking and has its
 * own tests; this file tests what the gateway makes of the answers.
 */
const HONEST = 'U'.padEnd(56, 'H');
const LIAR = 'U'.padEnd(56, 'L');
const SIM = 'U'.padEnd(56, 'S');
const GONE = 'U'.padEnd(56, 'G');
const CHALLENGE = '01900000-0000-7000-8000-00000000000a';
const PASSED = '01900000-0000-7000-8000-00000000000b';
const SEED = 'ab'.repeat(32);

const gpu = (index: number, available = true): ProviderView['gpus'][number] => ({
  uuid: `GPU-${index}`,
  index,
  vendor: 'nvidia',
  model: 'NVIDIA H100 80GB HBM3',
  vramBytes: 80 * 2 ** 30,
  computeCapability: { major: 9, minor: 0 },
  cudaVersion: '12.4',
  rocmVersion: null,
  architecture: null,
  pciBusId: null,
  priceFloorMinor: '2000000',
  directPeers: [],
  available,
});

const view = (providerId: string, name: string, simulated: boolean): ProviderView => ({
  providerId,
  name,
  simulated,
  // The simulated edge runs host processes, as a development edge does.
  isolation: simulated ? 'host-process' : 'container',
  cpuArchitecture: 'amd64',
  cpuMillicores: 64_000,
  memoryBytes: 512 * 2 ** 30,
  location: { continent: 'EU', country: 'DE', city: null },
  subnets: ['public'],
  maxGpusPerJob: 8,
  maxJobDurationMs: null,
  asset: 'USDC',
  status: 'online',
  isolationDetail: simulated
    ? 'host processes (--unsafe-allow-host-processes)'
    : 'Docker containers (runc): container root is host root',
  gpus: [gpu(0), gpu(1, false)],
});

const reliability = (providerId: string, score: number): ProviderTrust['reliability'] => ({
  providerId,
  score,
  mismatches: 1,
  verifiedRuns: 1,
  failedRuns: 1,
  lastVerifiedAt: '2030-01-01T00:00:00.000Z',
  lastMismatchAt: '2030-01-01T00:10:00.000Z',
});

/** A provider that claims H100s and committed 4.1 s after a 1.2 s deadline on GPU-0. */
const liarTrust: ProviderTrust = {
  providerId: LIAR,
  simulated: false,
  reliability: reliability(LIAR, 0.42),
  gpus: [
    { uuid: 'GPU-0', status: 'unverified', since: '2030-01-01T00:10:00.000Z', challengeId: CHALLENGE },
    { uuid: 'GPU-1', status: 'verified', since: '2030-01-01T00:00:00.000Z', challengeId: PASSED },
  ],
  challenges: [
    {
      challengeId: CHALLENGE,
      reason: 'registration',
      jobId: null,
      gpuUuid: 'GPU-0',
      outcome: 'failed',
      evidence: {
        seed: SEED,
        n: 4096,
        dtype: 'bf16',
        claimedTflops: 989,
        deadlineMs: 1200,
        elapsedMs: 4100.5,
        root: 'cd'.repeat(32),
        openedRows: [],
        failure: {
          kind: 'late',
          detail: 'the commitment came 4100.5 ms after the challenge; the deadline was 1200 ms',
        },
        bytesSent: 120,
        bytesReceived: 96,
      },
      at: '2030-01-01T00:10:00.000Z',
    },
    {
      challengeId: PASSED,
      reason: 'registration',
      jobId: null,
      gpuUuid: 'GPU-1',
      outcome: 'passed',
      evidence: {
        seed: 'ef'.repeat(32),
        n: 4096,
        dtype: 'bf16',
        claimedTflops: 989,
        deadlineMs: 1200,
        elapsedMs: 310,
        root: '12'.repeat(32),
        openedRows: [3, 1999, 4000],
        failure: null,
        bytesSent: 140,
        bytesReceived: 50_000,
      },
      at: '2030-01-01T00:00:00.000Z',
    },
  ],
};

const simTrust: ProviderTrust = {
  providerId: SIM,
  simulated: true,
  reliability: reliability(SIM, 1),
  gpus: [{ uuid: 'GPU-0', status: 'simulated', since: '2030-01-01T00:00:00.000Z', challengeId: null }],
  challenges: [],
};

describe('GET /v1/providers/{providerId} (real gateway and NATS; discovery and benchmarking as contract stand-ins)', () => {
  let h: GatewayHarness;
  let reader: string;
  let submitter: string;
  let served: Subscription[] = [];

  const get = (providerId: string, key = reader) =>
    fetch(`${h.url}/v1/providers/${providerId}`, { headers: { authorization: `Bearer ${key}` } });

  const discovery = () =>
    serveQuery(
      GetProvider,
      ({ providerId }): Promise<QueryResponse<typeof GetProvider>> => {
        const known: Record<string, ProviderView> = {
          [HONEST]: view(HONEST, 'honest-node', false),
          [LIAR]: view(LIAR, 'fast-claims', false),
          [SIM]: view(SIM, 'demo-node', true),
        };
        return Promise.resolve({ provider: known[providerId] ?? null });
      },
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
  const benchmarking = () =>
    serveQuery(
      GetProviderTrust,
      ({ providerId }) =>
        Promise.resolve({ trust: providerId === LIAR ? liarTrust : providerId === SIM ? simTrust : null }),
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
  const serve = async (...subscriptions: Subscription[]) => {
    served.push(...subscriptions);
    await h.nats.nc.flush();
  };

  beforeAll(async () => {
    h = await startHarness('gw-provider', { queryTimeoutMs: 500 });
    reader = await h.keyFor('tenant-reader', ['read']);
    submitter = await h.keyFor('tenant-submitter', ['submit']);
  }, 60_000);

  afterEach(() => {
    for (const s of served) s.unsubscribe();
    served = [];
  });

  afterAll(async () => {
    await h?.close();
  });

  it('shows a failed challenge with its evidence, the GPU unverified and the reliability lowered', async () => {
    await serve(discovery(), benchmarking());
    const res = await get(LIAR);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      providerId: LIAR,
      name: 'fast-claims',
      simulated: false,
      status: 'online',
      isolation: 'container',
      isolationDetail: 'Docker containers (runc): container root is host root',
      reliability: { score: 0.42, mismatches: 1, failedRuns: 1 },
      gpus: [
        {
          uuid: 'GPU-0',
          model: 'NVIDIA H100 80GB HBM3',
          available: true,
          simulated: false,
          verification: { status: 'unverified', since: '2030-01-01T00:10:00.000Z', challengeId: CHALLENGE },
        },
        {
          uuid: 'GPU-1',
          available: false,
          simulated: false,
          verification: { status: 'verified', challengeId: PASSED },
        },
      ],
    });
    // The evidence as benchmarking recorded it, newest first.
    expect(body['challenges']).toEqual(liarTrust.challenges);
  });

  it('labels a simulated provider and every one of its GPUs, with or without a trust record, and shows its isolation', async () => {
    await serve(discovery(), benchmarking());
    const body = (await (await get(SIM)).json()) as {
      simulated: boolean;
      gpus: { uuid: string; simulated: boolean; verification: { status: string; since: string | null } }[];
    };
    expect(body.simulated).toBe(true);
    expect(body).toMatchObject({
      isolation: 'host-process',
      isolationDetail: 'host processes (--unsafe-allow-host-processes)',
    });
    // GPU-0 has benchmarking's record; GPU-1 none: a simulated edge's GPU is simulated all the same.
    expect(body.gpus.map((g) => [g.uuid, g.simulated, g.verification.status, g.verification.since])).toEqual([
      ['GPU-0', true, 'simulated', '2030-01-01T00:00:00.000Z'],
      ['GPU-1', true, 'simulated', null],
    ]);
  });

  it('shows GPUs benchmarking has not challenged yet as pending', async () => {
    await serve(discovery(), benchmarking());
    const body = (await (await get(HONEST)).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      simulated: false,
      reliability: null,
      challenges: [],
      gpus: [
        {
          uuid: 'GPU-0',
          simulated: false,
          verification: { status: 'pending', since: null, challengeId: null },
        },
        {
          uuid: 'GPU-1',
          simulated: false,
          verification: { status: 'pending', since: null, challengeId: null },
        },
      ],
    });
  });

  it('is a 404 problem for a provider discovery does not know, whatever benchmarking says', async () => {
    await serve(discovery());
    const res = await get(GONE);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', detail: `no provider ${GONE}` });
  });

  it('is a 503 problem naming benchmarking when it has no responder or does not answer in time', async () => {
    await serve(discovery());
    const absent = await get(LIAR);
    expect(absent.status).toBe(503);
    expect(absent.headers.get('content-type')).toContain('application/problem+json');
    expect(await absent.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringMatching(
        /verification is unavailable \(benchmarking did not answer\).*benchmarking\.provider-trust/,
      ),
    });
    // A responder that takes the request and never replies: the gateway's query timeout.
    const asked: string[] = [];
    await serve(
      h.nats.nc.subscribe(GetProviderTrust.subject(h.nats.prefix), {
        callback: (_e, m) => void asked.push(m.subject),
      }),
    );
    const silent = await get(LIAR);
    expect(silent.status).toBe(503);
    expect(await silent.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringContaining('benchmarking'),
    });
    expect(asked).toHaveLength(1);
  });

  it('is a 503 problem when discovery does not answer', async () => {
    await serve(benchmarking());
    const res = await get(LIAR);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringContaining('discovery.provider'),
    });
  });

  it('refuses a malformed provider id (400 naming the field) and a key without the read scope (403)', async () => {
    await serve(discovery(), benchmarking());
    const bad = await get('not-an-edge');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'INVALID_REQUEST',
      errors: [{ path: 'path.providerId', message: expect.stringContaining('edge id') }],
    });
    expect((await get(LIAR, submitter)).status).toBe(403);
    expect((await fetch(`${h.url}/v1/providers/${LIAR}`)).status).toBe(401);
  });
});

/** What discovery lists of a provider: its free GPUs (GPU-1 of each is taken). */
const candidate = (providerId: string, name: string, simulated: boolean): CandidateProvider => {
  const { status: _status, isolationDetail: _detail, gpus, ...rest } = view(providerId, name, simulated);
  return { ...rest, gpus: gpus.filter((g) => g.available).map(({ available: _a, ...g }) => g) };
};

describe('GET /v1/providers (real gateway and NATS; discovery and benchmarking as contract stand-ins)', () => {
  let h: GatewayHarness;
  let reader: string;
  let served: Subscription[] = [];
  /** Each GPU-verification ask's provider ids, as benchmarking received them. */
  let asked: string[][] = [];

  const list = () => fetch(`${h.url}/v1/providers`, { headers: { authorization: `Bearer ${reader}` } });

  /** The liar lists both its "H100"s free here; the honest node one, the simulated node one. */
  const liar = (): CandidateProvider => ({
    ...candidate(LIAR, 'fast-claims', false),
    gpus: view(LIAR, 'fast-claims', false).gpus.map(({ available: _a, ...g }) => g),
  });
  const discovery = (
    items: CandidateProvider[] = [
      candidate(HONEST, 'honest-node', false),
      liar(),
      candidate(SIM, 'demo-node', true),
    ],
  ) =>
    serveQuery(
      FindCandidates,
      (): Promise<QueryResponse<typeof FindCandidates>> =>
        Promise.resolve({ items, nextCursor: 'next-page' }),
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
  const benchmarking = () =>
    serveQuery(
      FindGpuVerification,
      ({ providerIds }): Promise<QueryResponse<typeof FindGpuVerification>> => {
        asked.push(providerIds);
        const known = [liarTrust, simTrust]
          .filter((t) => providerIds.includes(t.providerId))
          .map((t) => ({
            providerId: t.providerId,
            simulated: t.simulated,
            gpus: t.gpus.map((g) => ({ uuid: g.uuid, status: g.status })),
          }));
        return Promise.resolve({ items: known });
      },
      { nc: h.nats.nc, prefix: h.nats.prefix },
    );
  const serve = async (...subscriptions: Subscription[]) => {
    served.push(...subscriptions);
    await h.nats.nc.flush();
  };
  const statuses = (body: {
    items: { providerId: string; gpus: { uuid: string; verification: { status: string } }[] }[];
  }) =>
    Object.fromEntries(
      body.items.map((p) => [p.providerId, p.gpus.map((g) => [g.uuid, g.verification.status] as const)]),
    );

  beforeAll(async () => {
    h = await startHarness('gw-providers', { queryTimeoutMs: 500 });
    reader = await h.keyFor('tenant-reader', ['read']);
  }, 60_000);

  afterEach(() => {
    for (const s of served) s.unsubscribe();
    served = [];
    asked = [];
  });

  afterAll(async () => {
    await h?.close();
  });

  it('shows each listed GPU with its verification, asking benchmarking once for the page', async () => {
    await serve(discovery(), benchmarking());
    const res = await list();
    expect(res.status).toBe(200);
    const body = (await res.json()) as Parameters<typeof statuses>[0] & { nextCursor: string | null };
    // The liar's two "H100"s: one failed its challenge, one passed. Unchallenged: pending. A
    // simulated GPU is simulated, with or without benchmarking's record of it.
    expect(statuses(body)).toEqual({
      [HONEST]: [['GPU-0', 'pending']],
      [LIAR]: [
        ['GPU-0', 'unverified'],
        ['GPU-1', 'verified'],
      ],
      [SIM]: [['GPU-0', 'simulated']],
    });
    expect(body.items.map((p) => [p.providerId, (p as unknown as { simulated: boolean }).simulated])).toEqual(
      [
        [HONEST, false],
        [LIAR, false],
        [SIM, true],
      ],
    );
    // Each with the isolation its edge runs ranks with, as discovery has it.
    expect(body.items.map((p) => [p.providerId, (p as unknown as { isolation: string }).isolation])).toEqual([
      [HONEST, 'container'],
      [LIAR, 'container'],
      [SIM, 'host-process'],
    ]);
    expect(body.nextCursor).toBe('next-page');
    expect(asked).toEqual([[HONEST, LIAR, SIM]]);
  });

  it('agrees with GET /v1/providers/{providerId} on every GPU it lists', async () => {
    const candidates = [candidate(HONEST, 'honest-node', false), liar(), candidate(SIM, 'demo-node', true)];
    await serve(
      discovery(candidates),
      benchmarking(),
      serveQuery(
        GetProvider,
        ({ providerId }) =>
          Promise.resolve({
            provider: view(providerId, 'x', candidates.find((c) => c.providerId === providerId)!.simulated),
          }),
        { nc: h.nats.nc, prefix: h.nats.prefix },
      ),
      serveQuery(
        GetProviderTrust,
        ({ providerId }) =>
          Promise.resolve({ trust: providerId === LIAR ? liarTrust : providerId === SIM ? simTrust : null }),
        { nc: h.nats.nc, prefix: h.nats.prefix },
      ),
    );
    const listed = statuses((await (await list()).json()) as Parameters<typeof statuses>[0]);
    for (const [providerId, gpus] of Object.entries(listed)) {
      const one = (await (
        await fetch(`${h.url}/v1/providers/${providerId}`, { headers: { authorization: `Bearer ${reader}` } })
      ).json()) as { gpus: { uuid: string; verification: { status: string } }[] };
      const shown = new Map(one.gpus.map((g) => [g.uuid, g.verification.status]));
      for (const [uuid, status] of gpus)
        expect([providerId, uuid, shown.get(uuid)]).toEqual([providerId, uuid, status]);
    }
  });

  it('does not ask benchmarking about an empty page', async () => {
    await serve(discovery([]), benchmarking());
    const res = await list();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ items: [], nextCursor: 'next-page' });
    expect(asked).toEqual([]);
  });

  it('is a 503 problem naming benchmarking when it has no responder or does not answer in time', async () => {
    await serve(discovery());
    const absent = await list();
    expect(absent.status).toBe(503);
    expect(absent.headers.get('content-type')).toContain('application/problem+json');
    expect(await absent.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringMatching(
        /verification is unavailable \(benchmarking did not answer\).*benchmarking\.gpu-verification/,
      ),
    });
    const subjects: string[] = [];
    await serve(
      h.nats.nc.subscribe(FindGpuVerification.subject(h.nats.prefix), {
        callback: (_e, m) => void subjects.push(m.subject),
      }),
    );
    const silent = await list();
    expect(silent.status).toBe(503);
    expect(await silent.json()).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      detail: expect.stringContaining('benchmarking'),
    });
    expect(subjects).toHaveLength(1);
  });
});
