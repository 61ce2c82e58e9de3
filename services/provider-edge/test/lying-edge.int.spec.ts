import {
  buildEnvelope,
  ChallengeCommitReplySchema,
  ChallengeOpenReplySchema,
  EdgeBenchmarkStream,
  type Envelope,
  OpenChallengeOnEdge,
  type PayloadOf,
  type EdgeBenchmarkReported,
  providerStreams,
  RunBenchmarkOnEdge,
  RunChallengeOnEdge,
} from '@gpunet/contracts';
import { newOpening, verifyOpening } from '@gpunet/edge-bench';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, FakeClock, type NatsTestContext, seededRandom, useNats } from '@gpunet/testing';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdgeAgent } from '../src/app/edge-agent';
import { execRunner } from '../src/infra/command-runner';
import { detect } from '../src/infra/detect/detector';
import { createIdentity } from '../src/infra/identity.store';
import { StateStore } from '../src/infra/state.store';
import { FIXTURES, fixture } from './support/fixtures';

/** The reconstructed nvidia-smi of two H100s (its header says so); torch on this host sees no GPU. */
const FAKE_NVIDIA_SMI = join(FIXTURES, 'nvidia', 'fake-h100x2', 'nvidia-smi');
const POLICY = fixture('policy', 'lab.policy.yaml').replace(/share: \[.*\]/, 'share: all');
const NOW = '2030-01-01T21:00:00.000Z';

describe('an edge that claims two H100s it does not have (fake nvidia-smi, real detection)', () => {
  let nats: NatsTestContext;
  let agent: EdgeAgent;
  const reports = new EventCollector<Envelope>('benchmark reports');

  beforeAll(async () => {
    nats = await useNats({ label: 'lying_edge' });
    await ensureStreams(await nats.jsm(), [...providerStreams, EdgeBenchmarkStream], nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.benchmark-reported.v1`, {
      callback: (_e, m) => reports.push(m.json<Envelope>()),
    });
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-lying-edge-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    const run = execRunner();
    agent = new EdgeAgent({
      identity: await createIdentity(join(dir, 'identity')),
      store: StateStore.in(dir),
      readPolicy: () => readFile(join(dir, 'policy.yaml'), 'utf8'),
      // The real backends and parsers; only the nvidia-smi executable is the fake.
      detect: () =>
        detect({
          workDir: dir,
          run: (program, args) => run(program === 'nvidia-smi' ? FAKE_NVIDIA_SMI : program, args),
        }),
      nats: { servers: nats.servers, prefix: nats.prefix },
      clock: new FakeClock(NOW),
      heartbeatIntervalMs: 0,
      rescanIntervalMs: 0,
      publishTimeoutMs: 1_000,
      challenges: { threads: 1 },
    });
    await agent.start();
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await nats?.cleanup();
  });

  it('detects two NVIDIA H100 80GB HBM3, not simulated, NVLinked', () => {
    expect(agent.inventory.simulated).toBe(false);
    expect(agent.inventory.gpus.map((g) => [g.index, g.vendor, g.model])).toEqual([
      [0, 'nvidia', 'NVIDIA H100 80GB HBM3'],
      [1, 'nvidia', 'NVIDIA H100 80GB HBM3'],
    ]);
    expect(agent.inventory.links).toHaveLength(1);
  });

  it('answers a challenge on its second "H100" by computing on the CPU: an honest product, verified', async () => {
    const gpu = agent.inventory.gpus[1]!;
    const rng = seededRandom('lying-edge');
    const seed = Array.from({ length: 32 }, () => rng.int(0, 255).toString(16).padStart(2, '0')).join('');
    const request = {
      challengeId: 'liar-1',
      seed,
      gpuUuid: gpu.uuid,
      n: 128,
      dtype: 'bf16' as const,
      deadlineMs: 30_000,
    };
    const commit = ChallengeCommitReplySchema.parse(
      (
        await nats.nc.request(
          RunChallengeOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
          JSON.stringify(buildEnvelope(RunChallengeOnEdge, request, { streamId: 'challenge-liar-1' })),
          { timeout: 60_000 },
        )
      ).json(),
    );
    if (commit.outcome !== 'committed') throw new Error(`${commit.code}: ${commit.message}`);
    const { rows, freivaldsSeed } = newOpening(128, 8, (size) =>
      Uint8Array.from({ length: size }, () => rng.int(0, 255)),
    );
    const opened = ChallengeOpenReplySchema.parse(
      (
        await nats.nc.request(
          OpenChallengeOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
          JSON.stringify(
            buildEnvelope(
              OpenChallengeOnEdge,
              { challengeId: 'liar-1', rows, freivaldsSeed },
              { streamId: 'challenge-liar-1' },
            ),
          ),
          { timeout: 30_000 },
        )
      ).json(),
    );
    if (opened.outcome !== 'opened') throw new Error(`${opened.code}: ${opened.message}`);
    expect(verifyOpening({ seed, n: 128, root: commit.root, rows, freivaldsSeed, reply: opened })).toEqual({
      ok: true,
    });
  }, 60_000);

  it('fails its benchmark cleanly: torch sees no CUDA device (DEVICE_ABSENT), not a CPU profile', async () => {
    const envelope = buildEnvelope(
      RunBenchmarkOnEdge,
      {
        requestId: 'liar-bench',
        reason: 'initial',
        suites: ['matmul'],
        maxDurationMs: 60_000,
        ttlMs: 86_400_000,
        allowWhileBusy: false,
      },
      { streamId: `benchmark-${agent.edgeId}` },
    );
    const reply = await nats.nc.request(
      RunBenchmarkOnEdge.subject({ edgeId: agent.edgeId }, nats.prefix),
      JSON.stringify(envelope),
      {
        timeout: 5_000,
      },
    );
    expect(reply.json()).toMatchObject({ requestId: 'liar-bench', outcome: 'accepted' });
    const report = await reports.waitFor(
      (e) => (e.data as { requestId?: string }).requestId === 'liar-bench',
      { timeoutMs: 60_000 },
    );
    const data = report.data as PayloadOf<typeof EdgeBenchmarkReported>;
    expect(data).toMatchObject({ outcome: 'failed', profile: null });
    expect(data.error).toMatch(/^BenchmarkRunnerError: .*(CUDA|cuda)/);
  }, 90_000);
});
