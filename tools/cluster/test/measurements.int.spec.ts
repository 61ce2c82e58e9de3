import { BenchmarkingStream, GpuBenchmarked, LinkMeasured } from '@gpunet/contracts';
import { simulatedProfile } from '@gpunet/edge-bench';
import { ensureStreams } from '@gpunet/eventing';
import { type NatsTestContext, useNats } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitMeasurements, MeasurementTimeoutError, publishAs } from '../src';

const AT = '2030-01-01T00:00:00.000Z';

/*
 * awaitMeasurements on a real JetStream stream: what benchmarking published before the call counts,
 * and a provider or pair never measured is named when the deadline passes.
 */
describe('awaitMeasurements', () => {
  let nats: NatsTestContext;
  const [a, b, c] = [createUser(), createUser(), createUser()].map((k) => k.getPublicKey()) as [
    string,
    string,
    string,
  ];

  const benchmarked = (providerId: string) =>
    publishAs(jetstream(nats.nc), nats.prefix, GpuBenchmarked, {
      providerId,
      requestId: `req-${providerId.slice(0, 8)}`,
      reason: 'initial',
      simulated: true,
      profile: simulatedProfile({
        gpus: [
          {
            index: 0,
            uuid: `SIM-${providerId.slice(0, 8)}-0`,
            vendor: 'nvidia',
            model: 'NVIDIA L4',
            vramBytes: 24 * 1024 ** 3,
          },
        ],
        rng: () => 0.5,
        nowMs: Date.parse(AT),
        ttlMs: 86_400_000,
        profileId: `p-${providerId.slice(0, 8)}`,
      }),
      at: AT,
    });

  const linked = (from: string, to: string) =>
    publishAs(jetstream(nats.nc), nats.prefix, LinkMeasured, {
      a: from,
      b: to,
      rttUs: 120,
      throughputBitsPerSecond: null,
      sameSite: true,
      path: 'direct',
      measuredAt: AT,
      expiresAt: '2030-01-02T00:00:00.000Z',
    });

  beforeAll(async () => {
    nats = await useNats({ label: 'await_measurements' });
    await ensureStreams(await nats.jsm(), [BenchmarkingStream], nats.prefix);
    await benchmarked(a);
    await benchmarked(b);
    await linked(b, a);
    await benchmarked(c);
  });

  afterAll(async () => {
    await nats?.cleanup();
  });

  it('resolves with the profiles and links published before the call', async () => {
    const measured = await awaitMeasurements(nats.nc, nats.prefix, [a, b], {
      links: true,
      timeoutMs: 10_000,
    });
    expect([...measured.profiles.keys()].sort()).toEqual([a, b].sort());
    expect(measured.profiles.get(a)).toMatchObject({ providerId: a, profile: { kind: 'simulated' } });
    expect(measured.links).toEqual([expect.objectContaining({ a: b, b: a, rttUs: 120 })]);
  });

  it('without links, the profiles are enough', async () => {
    const measured = await awaitMeasurements(nats.nc, nats.prefix, [a, c], {
      links: false,
      timeoutMs: 10_000,
    });
    expect([...measured.profiles.keys()].sort()).toEqual([a, c].sort());
  });

  it('names the pair never measured once the deadline passes', async () => {
    const error = await awaitMeasurements(nats.nc, nats.prefix, [a, b, c], {
      links: true,
      timeoutMs: 1_500,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MeasurementTimeoutError);
    const { message } = error as MeasurementTimeoutError;
    // a ↔ b was measured and every provider benchmarked: only c's pairs are missing.
    expect(message.match(/link\.measured of /g)).toHaveLength(2);
    expect(message).toContain(c);
    expect(message).not.toContain('gpu.benchmarked');
  });
});
