import {
  buildEnvelope,
  EdgeRegistered,
  namespacedStream,
  DeadLettersStream,
  type PayloadOf,
  signingInput,
} from '@gpunet/contracts';
import { waitFor } from '@gpunet/testing';
import { jetstream } from '@nats-io/jetstream';
import { createUser, type KeyPair } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDGE_REPORTS_CONSUMER } from '../src/app/edge-reports.handler';
import { type DiscoveryUnderTest, metricValue, startDiscovery } from './support/harness';

type Registration = PayloadOf<typeof EdgeRegistered>;

const unsignedRegistration = (id: string): Omit<Registration, 'signature'> => ({
  edgeId: id,
  publicKey: id,
  sequence: 1,
  signedAt: '2030-01-01T00:00:00.000Z',
  name: 'probe',
  agentVersion: '0.1.0',
  host: {
    hostname: 'h',
    os: { platform: 'linux', release: '6.1', distribution: null },
    cpu: { model: 'x', logicalCores: 8, architecture: 'amd64' },
    memoryBytes: 2 ** 34,
    diskFreeBytes: 2 ** 40,
    containerRuntimes: [],
    addresses: [],
  },
  inventory: {
    simulated: true,
    backends: [{ name: 'simulated', status: 'ok', detail: null }],
    gpus: [],
    links: [],
  },
  policy: {
    sharedGpuUuids: [],
    maxGpusPerJob: 1,
    maxJobDurationMs: null,
    cpuMillicores: 1000,
    memoryBytes: 2 ** 30,
    images: ['*'],
    pricing: { asset: 'USDC', defaultFloorMinor: null, floors: [] },
    subnets: ['public'],
    availability: null,
    location: { continent: null, country: null, city: null },
  },
});

const sign = (kp: KeyPair, data: object): string =>
  Buffer.from(
    kp.sign(new TextEncoder().encode(signingInput(EdgeRegistered, data as Record<string, unknown>))),
  ).toString('base64url');

describe('signed registrations (real NATS and Postgres)', () => {
  let d: DiscoveryUnderTest;
  const a = createUser();
  const b = createUser();
  const c = createUser();
  const A = a.getPublicKey();
  const C = c.getPublicKey();

  const publish = async (subjectEdgeId: string, data: object) => {
    // Straight onto the stream, bypassing the (trusting) envelope builder: this is what an attacker sends.
    const valid = buildEnvelope(
      EdgeRegistered,
      { ...unsignedRegistration(A), signature: 'A'.repeat(86) },
      { streamId: 'x' },
    );
    const envelope = { ...valid, data };
    await jetstream(d.nats.nc).publish(
      EdgeRegistered.subject({ edgeId: subjectEdgeId }, d.nats.prefix),
      JSON.stringify(envelope),
    );
  };

  beforeAll(async () => {
    d = await startDiscovery('sigs');
  }, 60_000);
  afterAll(async () => {
    await d?.close();
  }, 60_000);

  it('rejects and counts unsigned, wrongly signed, mismatched and replayed registrations; accepts the genuine one', async () => {
    const genuine = unsignedRegistration(A);
    // Unsigned: no signature at all.
    await publish(A, genuine);
    // Wrongly signed: A's payload signed with B's key.
    await publish(A, { ...genuine, signature: sign(b, genuine) });
    // B's key claimed for A's id.
    const claimed = { ...genuine, publicKey: b.getPublicKey() };
    await publish(A, { ...claimed, signature: sign(b, claimed) });
    // A's genuine registration replayed on C's subject.
    await publish(C, { ...genuine, signature: sign(a, genuine) });
    // The genuine one.
    await publish(A, { ...genuine, signature: sign(a, genuine) });

    const deadLettered = (code: string) =>
      metricValue(d.metrics, 'gpunet_consumer_dead_lettered_total', {
        consumer: EDGE_REPORTS_CONSUMER,
        code,
      });
    await waitFor(
      async () =>
        (await deadLettered('INVALID_MESSAGE')) === 1 && (await deadLettered('EDGE_REPORT_REJECTED')) === 3,
      {
        description: 'four registrations dead-lettered',
        timeoutMs: 20_000,
      },
    );
    const rejected = (reason: string) =>
      metricValue(d.metrics, 'gpunet_discovery_edge_reports_rejected_total', { reason });
    expect(await rejected('bad-signature')).toBe(1);
    expect(await rejected('key-mismatch')).toBe(1);
    expect(await rejected('subject-mismatch')).toBe(1);

    const providers = await waitFor(
      async () => {
        const rows = await d.eventing.db.query<{ provider_id: string }>(
          `SELECT provider_id FROM "${d.pg.schema}".providers`,
        );
        return rows.length > 0 ? rows : undefined;
      },
      { description: 'the genuine registration' },
    );
    expect(providers.map((p) => p.provider_id)).toEqual([A]);
    expect(C).not.toBe(A);

    // The dead letters keep the reason for people to inspect.
    const jsm = await d.nats.jsm();
    const dlq = namespacedStream(DeadLettersStream, d.nats.prefix).name;
    const info = await jsm.streams.info(dlq);
    expect(info.state.messages).toBe(4);
  });
});
