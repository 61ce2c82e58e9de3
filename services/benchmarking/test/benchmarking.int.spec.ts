import {
  buildEnvelope,
  EdgeLinksProbed,
  type Envelope,
  FindGpuProfiles,
  FindGpuVerification,
  FindReliability,
  GetNetworkEstimate,
  GetProviderTrust,
  type NetworkCoordinatesRefitted,
  type PayloadOf,
  type ProviderClaimMismatched,
  ProviderRegistered,
  ProviderReservationsChanged,
} from '@gpunet/contracts';
import {
  EdgeBenchmarkAgent,
  type ProbeResponder,
  runTorchBenchmark,
  signedReporter,
  simulatedProfile,
  startProbeResponder,
} from '@gpunet/edge-bench';
import { askQuery } from '@gpunet/eventing';
import { EventCollector, FakeClock, seededRandom, waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser, type KeyPair } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchmarkingUnderTest, HARNESS_LAN_RTT_US, startBenchmarking } from './support/harness';
import {
  publishDiscoveryEvent,
  registered,
  reservationsChanged,
  simulatedGpu,
} from './support/discovery-events';

const H100 = 'NVIDIA H100 80GB HBM3';
const MIN = 60_000;
const DAY = 24 * 3600_000;
// Probe ports of this suite (every host on its own loopback address, the same ports everywhere).
const PORT = 20_000 + Math.floor(Math.random() * 20_000);

interface Edge {
  readonly name: string;
  readonly key: KeyPair;
  readonly id: string;
  readonly address: string;
  agent?: EdgeBenchmarkAgent;
  responder?: ProbeResponder;
}

describe('benchmarking service (NATS + Postgres, simulated and CPU edges)', () => {
  let svc: BenchmarkingUnderTest;
  const clock = new FakeClock(new Date());
  const events = new EventCollector<Envelope>('benchmarking events');
  const benchmarkCommands = new EventCollector<Envelope>('benchmark commands to edges');
  const benchmarkReports = new EventCollector<Envelope>('edges’ benchmark reports');
  const edge = (name: string, n: number): Edge => {
    const key = createUser();
    return { name, key, id: key.getPublicKey(), address: `127.0.${n}.${10 + n}` };
  };
  const honest = edge('honest-h100', 1);
  const fake = edge('fake-h100', 2);
  const cpu = edge('cpu-only', 3);
  const silent = edge('silent', 4);
  const edges = [honest, fake, cpu, silent];
  let sequence = 0;

  const ask = { timeoutMs: 5_000 };
  const reliability = async () =>
    Object.fromEntries(
      (await askQuery(svc.nats.nc, FindReliability, {}, { ...ask, prefix: svc.nats.prefix })).items.map(
        (r) => [edges.find((e) => e.id === r.providerId)!.name, r.score],
      ),
    );
  beforeAll(async () => {
    svc = await startBenchmarking(
      'bench_svc',
      { probeUdpPort: PORT, probeTcpPort: PORT, spotCheckProbability: 1, spotCheckMinIntervalMs: 2 * DAY },
      clock,
    );
    svc.nats.nc.subscribe(`${svc.nats.prefix}.benchmarking.>`, {
      callback: (_e, m) => events.push(m.json<Envelope>()),
    });
    // Beside the edges' agents, which answer: a plain subscriber only sees the commands.
    svc.nats.nc.subscribe(`${svc.nats.prefix}.cmd.edge.*.benchmark.v1`, {
      callback: (_e, m) => benchmarkCommands.push(m.json<Envelope>()),
    });
    svc.nats.nc.subscribe(`${svc.nats.prefix}.edge.*.benchmark-reported.v1`, {
      callback: (_e, m) => benchmarkReports.push(m.json<Envelope>()),
    });
    const js = jetstream(svc.nats.nc);
    const rng = seededRandom('simulated-noise');
    for (const e of [honest, fake, cpu]) {
      e.responder = await startProbeResponder({ address: e.address, udpPort: PORT, tcpPort: PORT });
      e.agent = new EdgeBenchmarkAgent({
        edgeId: e.id,
        nc: svc.nats.nc,
        prefix: svc.nats.prefix,
        isBusy: () => false,
        clock,
        benchmark: (request) =>
          e === cpu
            ? runTorchBenchmark({
                maxDurationMs: 45_000,
                ttlMs: request.ttlMs,
                quick: true,
                minTrialSeconds: 0.05,
                trials: 1,
                profileId: request.requestId,
              })
            : Promise.resolve(
                simulatedProfile({
                  gpus: [
                    {
                      index: 0,
                      uuid: 'SIM-nvidia-0',
                      vendor: 'nvidia',
                      model: H100,
                      vramBytes: 80 * 1024 ** 3,
                    },
                  ],
                  declared: e === fake ? () => ({ behavesLike: 'T4' }) : undefined,
                  rng: rng.next,
                  nowMs: clock.now().getTime(),
                  ttlMs: request.ttlMs,
                  profileId: request.requestId,
                }),
              ),
        report: signedReporter({
          edgeId: e.id,
          js,
          prefix: svc.nats.prefix,
          clock,
          nextSequence: () => ++sequence,
          sign: (text) => Buffer.from(e.key.sign(new TextEncoder().encode(text))).toString('base64url'),
        }),
      });
      e.agent.start();
    }
    for (const e of edges)
      await publishDiscoveryEvent(
        js,
        svc.nats.prefix,
        ProviderRegistered,
        registered(e.id, {
          name: e.name,
          address: e.address,
          gpus: e === cpu ? [] : [simulatedGpu(0, H100, 80 * 1024 ** 3)],
          simulated: e !== cpu,
          at: clock.now().toISOString(),
        }),
      );
    await waitFor(
      async () =>
        (await svc.pg.pool.query(`SELECT count(*)::int AS n FROM "${svc.pg.schema}".providers`)).rows[0].n ===
        4,
      { description: 'the four providers in the claims view' },
    );
  }, 60_000);

  afterAll(async () => {
    for (const e of edges) {
      await e.agent?.stop();
      await e.responder?.close();
    }
    await svc?.close();
  });

  it('serves its consumers under the durable names they always had (and the job ones), and the five queries', () => {
    const served = svc.service.transport!.describe();
    expect(served.consumers.map((c) => [c.name, c.stream])).toEqual([
      ['benchmarking-discovery', 'DISCOVERY'],
      ['benchmarking-edge-reports', 'EDGE_BENCHMARKS'],
      ['benchmarking-job-overlays', 'EXECUTION'],
      ['benchmarking-job-funding', 'SETTLEMENT'],
      ['benchmarking-job-placements', 'SCHEDULER'],
      ['benchmarking-job-ends', 'EXECUTION'],
    ]);
    expect([...served.queries].sort()).toEqual(
      [
        FindGpuProfiles.name,
        FindGpuVerification.name,
        FindReliability.name,
        GetNetworkEstimate.name,
        GetProviderTrust.name,
      ].sort(),
    );
  });

  it('benchmarks every new provider, verifies honest claims and flags the fake H100 with the evidence', async () => {
    const sweep = await svc.scheduler.sweep();
    expect(sweep.requested.map((r) => r.reason)).toEqual(['initial', 'initial', 'initial', 'initial']);
    const mismatch = await events.waitFor((e) => e.type === 'provider.claim.mismatched', {
      timeoutMs: 30_000,
    });
    const data = mismatch.data as PayloadOf<typeof ProviderClaimMismatched>;
    expect(data.providerId).toBe(fake.id);
    expect(data.evidence.failed.map((c) => c.metric)).toEqual([
      'matmul-fp32-tflops',
      'matmul-fp16-tflops',
      'memory-bandwidth-gbps',
    ]);
    expect(data.evidence.failed[1]).toMatchObject({
      claimed: H100,
      reference: 'H100 SXM',
      published: 989.4,
      verdict: 'below-tolerance',
    });
    expect(data.evidence.profileKind).toBe('simulated');
    expect(data).toMatchObject({ reliabilityBefore: 0.8, reliabilityAfter: 0.32 });
    for (const id of [honest.id, cpu.id])
      await events.waitFor(
        (e) => e.type === 'provider.claim.verified' && (e.data as { providerId: string }).providerId === id,
        {
          timeoutMs: 60_000,
        },
      );
    expect(await reliability()).toEqual({
      'honest-h100': 0.85,
      'fake-h100': 0.32,
      'cpu-only': 0.85,
      silent: 0.8,
    });
    const profiles = await askQuery(
      svc.nats.nc,
      FindGpuProfiles,
      { providerIds: [honest.id, cpu.id] },
      { ...ask, prefix: svc.nats.prefix },
    );
    const byId = new Map(profiles.items.map((p) => [p.providerId, p]));
    expect(byId.get(honest.id)).toMatchObject({
      simulated: true,
      expired: false,
      profile: { kind: 'simulated' },
    });
    expect(byId.get(cpu.id)!.profile).toMatchObject({ kind: 'cpu', runner: { name: 'gpu-bench' } });
    expect(byId.get(cpu.id)!.profile!.devices[0]!.matmulTflops.fp32).toBeGreaterThan(0);
  }, 90_000);

  it('stamps each request with the id that starts its chain, and the command to the edge with the request', async () => {
    const requested = events.items.filter((e) => e.type === 'benchmark.requested');
    expect(requested).toHaveLength(4);
    for (const request of requested) {
      const { requestId, providerId } = request.data as { requestId: string; providerId: string };
      expect(request).toMatchObject({
        streamId: `benchmarking-provider-${providerId}`,
        correlationId: requestId,
        causationId: requestId,
      });
      const command = await benchmarkCommands.waitFor(
        (c) => (c.data as { requestId: string }).requestId === requestId,
      );
      expect(command).toMatchObject({
        streamId: `benchmarking-${providerId}`,
        correlationId: requestId,
        causationId: request.eventId,
      });
    }
    // What a report decided carries the report's correlation and names it as the cause.
    const verdict = events.items.find((e) => e.type === 'provider.claim.mismatched')!;
    const report = benchmarkReports.items.find((r) => (r.data as { edgeId: string }).edgeId === fake.id)!;
    expect(verdict).toMatchObject({ correlationId: report.correlationId, causationId: report.eventId });
    expect(events.items.filter((e) => typeof e.causationId !== 'string')).toEqual([]);
  });

  it('fails a request the edge never answers at its deadline, and lowers the score', async () => {
    clock.advance(16 * MIN);
    const sweep = await svc.scheduler.sweep();
    expect(sweep.expired).toEqual([silent.id]);
    const failed = await events.waitFor((e) => e.type === 'benchmark.failed');
    expect(failed.data).toMatchObject({ providerId: silent.id, cause: 'timed-out' });
    await waitFor(async () => (await reliability())['silent'] === 0.72, { description: 'silent at 0.72' });
  });

  it('spot-checks at random, never while a job holds the GPUs, and the fake keeps failing', async () => {
    await publishDiscoveryEvent(
      jetstream(svc.nats.nc),
      svc.nats.prefix,
      ProviderReservationsChanged,
      reservationsChanged(honest.id, 1, clock.now().toISOString(), 2),
    );
    await waitFor(
      async () =>
        (
          await svc.pg.pool.query(`SELECT busy FROM "${svc.pg.schema}".providers WHERE provider_id = $1`, [
            honest.id,
          ])
        ).rows[0].busy === true,
    );
    clock.advance(2 * DAY);
    const sweep = await svc.scheduler.sweep();
    const reasons = Object.fromEntries(
      sweep.requested.map((r) => [edges.find((e) => e.id === r.providerId)!.name, r.reason]),
    );
    expect(reasons).toEqual({ 'fake-h100': 'spot-check', 'cpu-only': 'spot-check', silent: 'initial' });
    await waitFor(async () => (await reliability())['fake-h100'] === 0.128, {
      timeoutMs: 60_000,
      description: 'fake at 0.128',
    });
    await publishDiscoveryEvent(
      jetstream(svc.nats.nc),
      svc.nats.prefix,
      ProviderReservationsChanged,
      reservationsChanged(honest.id, 0, clock.now().toISOString(), 3),
    );
    await waitFor(
      async () =>
        (
          await svc.pg.pool.query(`SELECT busy FROM "${svc.pg.schema}".providers WHERE provider_id = $1`, [
            honest.id,
          ])
        ).rows[0].busy === false,
    );
    expect((await svc.scheduler.sweep()).requested).toEqual([
      { providerId: honest.id, reason: 'spot-check' },
    ]);
  }, 120_000);

  it('probes a bounded sample of links, fits coordinates and serves the network estimate', async () => {
    const cycle = await svc.probes.run();
    expect(cycle.requests).toBeGreaterThan(0);
    expect(cycle.reported).toBeGreaterThan(0);
    await waitFor(
      async () =>
        (await svc.pg.pool.query(`SELECT count(*)::int AS n FROM "${svc.pg.schema}".coordinates`)).rows[0]
          .n === 4,
      { timeoutMs: 20_000, description: 'coordinates for the four hosts' },
    );
    await svc.refitter.idle();
    const estimate = await askQuery(svc.nats.nc, GetNetworkEstimate, {}, { ...ask, prefix: svc.nats.prefix });
    expect(estimate.coordinates).toHaveLength(4);
    expect(estimate.links.length).toBeGreaterThanOrEqual(2);
    for (const link of estimate.links) {
      expect([honest.id, fake.id, cpu.id]).toContain(link.a);
      expect(link.sameSite).toBe(true);
      expect(link.rttUs).toBeLessThan(HARNESS_LAN_RTT_US);
    }
    expect(estimate.links.some((l) => l.throughputBitsPerSecond !== null)).toBe(true);
    await events.waitFor((e) => e.type === 'link.measured');
    // The fits go out too (the scheduler's source of coordinates and sites): the hosts each fit
    // changed, so the newest announcement of every host is its coordinate's site in the estimate.
    await events.waitFor((e) => e.type === 'network.coordinates.refitted');
    const announced = new Map<string, string>();
    for (const e of events.items.filter((x) => x.type === 'network.coordinates.refitted')) {
      const fit = e.data as PayloadOf<typeof NetworkCoordinatesRefitted>;
      expect(Date.parse(fit.expiresAt)).toBeGreaterThan(Date.parse(fit.fittedAt));
      for (const h of fit.hosts) announced.set(h.hostId, h.siteId);
    }
    expect(announced).toEqual(new Map(estimate.coordinates.map((c) => [c.hostId, c.siteId])));
  }, 60_000);

  it('ignores link reports nobody asked for and dead-letters forged ones', async () => {
    const js = jetstream(svc.nats.nc);
    const unsolicited = signedReporter({
      edgeId: honest.id,
      js,
      prefix: svc.nats.prefix,
      nextSequence: () => ++sequence,
      sign: (text) => Buffer.from(honest.key.sign(new TextEncoder().encode(text))).toString('base64url'),
    });
    await unsolicited(EdgeLinksProbed, {
      requestId: 'never-sent',
      probedAt: clock.now().toISOString(),
      results: [],
    });
    const forged = buildEnvelope(
      EdgeLinksProbed,
      {
        edgeId: honest.id,
        publicKey: honest.id,
        sequence: ++sequence,
        signedAt: clock.now().toISOString(),
        signature: 'A'.repeat(86),
        requestId: 'forged',
        probedAt: clock.now().toISOString(),
        results: [],
      },
      { streamId: `edge-${honest.id}` },
    );
    await js.publish(
      EdgeLinksProbed.subject({ edgeId: honest.id }, svc.nats.prefix),
      JSON.stringify(forged),
      {
        msgID: forged.eventId,
      },
    );
    const counter = async (result: string) =>
      (await svc.metrics.getSingleMetric('gpunet_benchmarking_edge_reports_total')!.get()).values.find(
        (v) => v.labels['kind'] === 'links' && v.labels['result'] === result,
      )?.value ?? 0;
    await waitFor(
      async () => (await counter('ignored')) >= 1 && (await counter('rejected-bad-signature')) >= 1,
      {
        description: 'one ignored and one rejected link report',
      },
    );
  });

  it('reported no errors but the forged report it refused', () => {
    expect(
      svc.errors.filter((e) => !e.includes('EDGE_REPORT_REJECTED') && !e.includes('refused: bad-signature')),
    ).toEqual([]);
  });
});
