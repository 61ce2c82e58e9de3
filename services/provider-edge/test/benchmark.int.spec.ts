import {
  BenchmarkReplySchema,
  buildEnvelope,
  EdgeBenchmarkReported,
  EdgeBenchmarkStream,
  edgeIdOfSubject,
  type Envelope,
  namespacedStream,
  type PayloadOf,
  providerStreams,
  ReservationReplySchema,
  ReserveOnEdge,
  RunBenchmarkOnEdge,
  verifyEdgeReport,
} from '@gpunet/contracts';
import { measureRtt, measureThroughput } from '@gpunet/edge-bench';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, FakeClock, type NatsTestContext, useNats } from '@gpunet/testing';
import { createSocket } from 'node:dgram';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent, ProbeResponderError } from '../src/app/edge-agent';
import { detect } from '../src/infra/detect/detector';
import { createIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { FIXTURES, fixture } from './support/fixtures';

const POLICY = fixture('policy', 'lab.policy.yaml').replace(/share: \[.*\]/, 'share: all');
const H100 = join(FIXTURES, 'simulated', 'h100-node.inventory.yaml');
// Inside the policy's availability windows (Tuesday 22:00 in Berlin).
const NOW = '2030-01-01T21:00:00.000Z';

describe('the edge runs the benchmark agent', () => {
  let nats: NatsTestContext;
  let agent: EdgeAgent;
  const reports = new EventCollector<{ subject: string; envelope: Envelope }>('benchmark reports');

  /** An edge on the H100 inventory in a fresh directory, started by the caller. */
  const edgeWith = async (probeResponder?: { udpPort: number; tcpPort: number; address: string }) => {
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-edge-bench-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    return new EdgeAgent({
      identity: await createIdentity(join(dir, 'identity')),
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      detect: () => detect({ workDir: dir, simulate: H100 }),
      nats: { servers: nats.servers, prefix: nats.prefix },
      clock: new FakeClock(NOW),
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 1_000,
      random: () => 0.5,
      ...(probeResponder ? { benchmarks: { probeResponder } } : {}),
    });
  };

  beforeAll(async () => {
    nats = await useNats({ label: 'edge_benchmarks' });
    await ensureStreams(await nats.jsm(), [...providerStreams, EdgeBenchmarkStream], nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.benchmark-reported.v1`, {
      callback: (_e, m) => reports.push({ subject: m.subject, envelope: m.json<Envelope>() }),
    });
    await nats.nc.flush();
    agent = await edgeWith({ udpPort: 0, tcpPort: 0, address: '127.0.0.1' });
    await agent.start();
  }, 30_000);

  afterAll(async () => {
    await agent?.stop();
    await nats?.cleanup();
  });

  const benchmark = async (requestId: string) => {
    const envelope = buildEnvelope(
      RunBenchmarkOnEdge,
      {
        requestId,
        reason: 'initial',
        suites: ['matmul', 'memory'],
        maxDurationMs: 60_000,
        ttlMs: 86_400_000,
        allowWhileBusy: false,
      },
      { streamId: `benchmark-${agent.edgeId}` },
    );
    const reply = await nats.nc.request(
      RunBenchmarkOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
      JSON.stringify(envelope),
      { timeout: 5_000 },
    );
    return BenchmarkReplySchema.parse(reply.json());
  };

  it('accepts a benchmark and reports a signed, simulated profile to JetStream', async () => {
    expect(await benchmark('bench-1')).toEqual({ requestId: 'bench-1', outcome: 'accepted' });
    const seen = await reports.waitFor(
      (r) => (r.envelope.data as { requestId?: string }).requestId === 'bench-1',
    );
    // Acknowledged by JetStream: read the stored report back and verify it as benchmarking would.
    await agent.flushed();
    const stored = await (
      await nats.jsm()
    ).streams.getMessage(namespacedStream(EdgeBenchmarkStream, nats.prefix).name, {
      last_by_subj: seen.subject,
    });
    const envelope = stored!.json<Envelope>();
    expect(envelope.eventId).toBe(seen.envelope.eventId);
    const data = envelope.data as PayloadOf<typeof EdgeBenchmarkReported>;
    expect(data).toMatchObject({ edgeId: agent.edgeId, requestId: 'bench-1', outcome: 'completed' });
    expect(
      verifyEdgeReport(EdgeBenchmarkReported, edgeIdOfSubject(stored!.subject, nats.prefix), data),
    ).toBeNull();
    expect(data.profile!.kind).toBe('simulated');
    expect(data.profile!.devices.every((d) => d.kind === 'simulated')).toBe(true);
    expect(data.profile!.devices.map((d) => d.uuid)).toEqual(agent.inventory.gpus.map((g) => g.uuid));
    // The edge's own sequence: above the registration's.
    expect(data.sequence).toBeGreaterThan(0);
  });

  it('declines BUSY while a reservation holds the host', async () => {
    const reserve = buildEnvelope(
      ReserveOnEdge,
      {
        reservationId: 'r-1',
        jobId: 'job-1',
        gpuUuids: [agent.inventory.gpus[0]!.uuid],
        cpuMillicores: 1_000,
        memoryBytes: 1024 ** 3,
        image: null,
        maxDurationMs: 3_600_000,
        subnet: 'public',
        asset: 'USDC',
        pricePerGpuHourMinor: '3000000',
        holdUntil: new Date(Date.parse(NOW) + 600_000).toISOString(),
      },
      { streamId: 'job-1' },
    );
    const reply = await nats.nc.request(
      ReserveOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
      JSON.stringify(reserve),
      { timeout: 5_000 },
    );
    expect(ReservationReplySchema.parse(reply.json())).toMatchObject({ outcome: 'accepted' });
    expect(await benchmark('bench-2')).toMatchObject({
      requestId: 'bench-2',
      outcome: 'declined',
      reason: { code: 'BUSY' },
    });
  });

  it('answers peers’ link probes on its responder: UDP echoes and a bounded transfer', async () => {
    const ports = agent.probePorts!;
    const rtt = await measureRtt('127.0.0.1', ports.udpPort, 5, 1_000);
    expect(rtt).toMatchObject({ sent: 5, received: 5 });
    const transfer = await measureThroughput('127.0.0.1', ports.tcpPort, 1024 * 1024, 2_000);
    expect(transfer.bytes).toBe(1024 * 1024);
  });

  it('does not start when its probe port is taken, and says which', async () => {
    const taken = createSocket('udp4');
    await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', resolve));
    const edge = await edgeWith({ udpPort: taken.address().port, tcpPort: 0, address: '127.0.0.1' });
    try {
      const started = edge.start();
      await expect(started).rejects.toBeInstanceOf(ProbeResponderError);
      await expect(started).rejects.toThrow(`udp ${taken.address().port}`);
    } finally {
      await edge.stop();
      taken.close();
    }
  });
});
