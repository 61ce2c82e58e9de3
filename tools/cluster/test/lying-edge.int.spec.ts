import {
  buildEnvelope,
  ChallengeCommitReplySchema,
  type EdgeRegistered,
  type Envelope,
  type PayloadOf,
  providerStreams,
  RunChallengeOnEdge,
} from '@gpunet/contracts';
import { commitChallenge } from '@gpunet/edge-bench';
import { ensureStreams } from '@gpunet/eventing';
import { EventCollector, type NatsTestContext, useNats } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedEdge, startLyingH100Edge } from '../src';

/* startLyingH100Edge: a real provider-edge process, the fake nvidia-smi first on its PATH. */
describe('startLyingH100Edge', () => {
  let nats: NatsTestContext;
  let edge: SimulatedEdge;
  const registered = new EventCollector<Envelope>('edge registrations');

  beforeAll(async () => {
    nats = await useNats({ label: 'lying_h100' });
    await ensureStreams(await nats.jsm(), providerStreams, nats.prefix);
    nats.nc.subscribe(`${nats.prefix}.edge.*.registered.v1`, {
      callback: (_e, m) => registered.push(m.json<Envelope>()),
    });
    await nats.nc.flush();
    edge = await startLyingH100Edge({
      name: 'liar',
      subnets: ['public'],
      natsUrl: String(nats.servers),
      prefix: nats.prefix,
    });
  }, 120_000);

  afterAll(async () => {
    await edge?.remove();
    await nats?.cleanup();
  });

  it('registers two H100s, not simulated, and commits to a challenge computed on the CPU', async () => {
    const registration = (await registered.waitFor(() => true, { timeoutMs: 30_000 })).data as PayloadOf<
      typeof EdgeRegistered
    >;
    expect(registration.inventory.simulated).toBe(false);
    expect(registration.inventory.gpus.map((g) => g.model)).toEqual([
      'NVIDIA H100 80GB HBM3',
      'NVIDIA H100 80GB HBM3',
    ]);
    const seed = '5a'.repeat(32);
    const request = {
      challengeId: 'liar-process',
      seed,
      gpuUuid: registration.inventory.gpus[0]!.uuid,
      n: 64,
      dtype: 'fp16' as const,
      deadlineMs: 30_000,
    };
    const reply = await nats.nc.request(
      RunChallengeOnEdge.subject({ edgeId: edge.edgeId }, nats.prefix),
      JSON.stringify(buildEnvelope(RunChallengeOnEdge, request, { streamId: 'challenge-liar-process' })),
      { timeout: 60_000 },
    );
    expect(ChallengeCommitReplySchema.parse(reply.json())).toMatchObject({
      outcome: 'committed',
      root: commitChallenge(seed, 64).root,
    });
    expect(edge.process.output).toMatch(/"msg":"challenge committed".*"device":"cpu"/);
  }, 90_000);
});
