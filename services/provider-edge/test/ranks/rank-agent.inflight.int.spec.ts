import { buildEnvelope, StartRankOnEdge, StopRanksOnEdge } from '@gpunet/contracts';
import { FakeClock, waitFor } from '@gpunet/testing';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RankAgent } from '../../src/app/rank-agent';
import type { RankRecord } from '../../src/infra/state.store';
import type { RankExit, RankLaunch, RankRuntime, RunningRank } from '../../src/app/rank-runtime.port';

const EDGE = 'UABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUVW';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A runtime whose starts wait until the test lets them finish (a docker pull, say). */
const slowRuntime = () => {
  const launches: RankLaunch[] = [];
  const stops: number[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const runtime: RankRuntime = {
    kind: 'process',
    unavailable: () => Promise.resolve(null),
    start: async (launch) => {
      launches.push(launch);
      await gate;
      let exit: (e: RankExit) => void = () => undefined;
      const exited = new Promise<RankExit>((r) => (exit = r));
      const rank: RunningRank = {
        id: `fake-${launches.length}`,
        onOutput: () => undefined,
        exited,
        stop: (graceMs) => {
          stops.push(graceMs);
          exit({ exitCode: null, signal: 'SIGTERM', reason: 'stopped' });
          return exited;
        },
      };
      return rank;
    },
    reapOrphans: () => Promise.resolve(0),
  };
  return { runtime, launches, stops, release };
};

const agentWith = async (runtime: RankRuntime) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gpunet-rank-inflight-'));
  dirs.push(dataDir);
  let ranks: readonly RankRecord[] = [];
  const published: string[] = [];
  const agent = new RankAgent({
    edgeId: EDGE,
    nc: { publish: () => undefined, isClosed: () => false } as unknown as NatsConnection,
    js: {
      publish: (subject: string) => {
        published.push(subject);
        return Promise.resolve({});
      },
    } as unknown as JetStreamClient,
    prefix: '',
    runtimes: [runtime],
    dataDir,
    clock: new FakeClock('2030-01-01T21:00:00.000Z'),
    log: () => undefined,
    random: () => 0.5,
    publishTimeoutMs: 1_000,
    sign: () => 'A'.repeat(86),
    host: {
      exclusive: (fn) => fn(),
      ranks: () => ranks,
      saveRanks: (r) => {
        ranks = r;
        return Promise.resolve();
      },
      context: () => ({
        policy: { images: ['*'], maxJobDurationMs: null },
        gpus: [],
        reservations: [
          {
            reservationId: 'res-1',
            jobId: 'job-1',
            gpuUuids: ['SIM-nvidia-0'],
            cpuMillicores: 1_000,
            memoryBytes: 1024 ** 3,
            expiresAt: '2030-01-01T22:00:00.000Z',
          },
        ],
      }),
      connected: () => true,
    },
  });
  return { agent, ranks: () => ranks };
};

const start = buildEnvelope(
  StartRankOnEdge,
  {
    jobId: 'job-1',
    attempt: 1,
    reservationId: 'res-1',
    allocation: 'a',
    rank: 0,
    localRank: 0,
    worldSize: 1,
    runtime: 'process',
    image: null,
    cmd: ['/bin/true'],
    entrypoint: null,
    env: {},
    workingDir: null,
    gpuUuids: [],
    limits: { cpuMillicores: 0, memoryBytes: 0, pids: null },
    maxDurationMs: 60_000,
    overlay: null,
  },
  { streamId: 'job-1' },
);
const START = StartRankOnEdge.subject({ edgeId: EDGE });
const STOP = StopRanksOnEdge.subject({ edgeId: EDGE });

describe('starts under way', () => {
  it('a duplicate waits for the first and starts nothing; a stop meanwhile stops the rank once it exists', async () => {
    const slow = slowRuntime();
    const { agent, ranks } = await agentWith(slow.runtime);
    const first = agent.answer(START, start);
    const second = agent.answer(START, start);
    await waitFor(() => slow.launches.length === 1, { description: 'the first start under way' });
    const stop = buildEnvelope(
      StopRanksOnEdge,
      { jobId: 'job-1', attempt: 1, reason: 'cancelled', graceMs: 1_000 },
      { streamId: 'job-1' },
    );
    expect(await agent.answer(STOP, stop)).toEqual({ jobId: 'job-1', stopping: 1 });
    slow.release();
    expect(await first).toMatchObject({ outcome: 'started', created: true });
    expect(await second).toMatchObject({ outcome: 'started', created: false });
    expect(slow.launches).toHaveLength(1);
    expect(slow.stops).toEqual([1_000]);
    await agent.stop();
    expect(ranks()).toMatchObject([{ state: 'exited', stopReason: 'cancelled', signal: 'SIGTERM' }]);
  });
});
