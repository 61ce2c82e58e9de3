import { AttachOverlay, ConnectOverlayPeers, type OverlayAttachReply } from '@gpunet/contracts';
import { type NatsTestContext, useNats } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EdgeOverlayAgent,
  generateAdmissionKeys,
  JobOverlayCoordinator,
  natsEdgeOverlayTransport,
  OverlayPrepareError,
  rankNetnsName,
} from '../src';
import { FakeRuntime } from './support/fake-runtime';

/*
 * The command plane over a real NATS server: two EdgeOverlayAgents (their host work faked — the
 * namespace e2e test in services/relay runs the real one) answer the coordinator's requests.
 */
describe('overlay command plane over NATS', () => {
  let nats: NatsTestContext;
  const edges = [`U${'A'.repeat(55)}`, `U${'B'.repeat(55)}`];
  const runtimes = edges.map(() => new FakeRuntime());
  let agents: EdgeOverlayAgent[];
  let coordinator: JobOverlayCoordinator;
  const answered: string[] = [];
  const keys = generateAdmissionKeys();
  const relays = [{ relayId: 'relay-1', host: '203.0.113.10', port: 8443, stunPorts: [3478, 3479] }];

  beforeAll(async () => {
    nats = await useNats({ label: 'overlay_command_plane' });
    agents = edges.map(
      (edgeId, i) =>
        new EdgeOverlayAgent({
          onAnswered: (kind, outcome, ms) => {
            expect(ms).toBeGreaterThanOrEqual(0);
            answered.push(`${i} ${kind} ${outcome}`);
          },
          nc: nats.nc,
          edgeId,
          prefix: nats.prefix,
          netnsPrefix: `e${i}`,
          runtime: runtimes[i]!,
        }),
    );
    await Promise.all(agents.map((a) => a.start()));
    coordinator = new JobOverlayCoordinator({
      transport: natsEdgeOverlayTransport(nats.nc, { prefix: nats.prefix }),
      attachTimeoutMs: 10_000,
      connectTimeoutMs: 10_000,
      detachTimeoutMs: 10_000,
    });
  });

  afterAll(async () => {
    await Promise.all((agents ?? []).map((a) => a.stop()));
    await nats?.cleanup();
  });

  it('prepares a job across two edges: attach, tokens, connect, report', async () => {
    const overlay = await coordinator.prepare({
      jobId: 'job-int',
      hosts: edges.map((edgeId, i) => ({ edgeId, hostId: `h${i}` })),
      relays,
      admission: { signingKey: keys.signingKey },
      networksInUse: [],
    });
    expect(overlay.networkCidr).toBe('100.96.0.0/24');
    expect(overlay.report).toMatchObject({ jobId: 'job-int', relayed: 1, other: 0 });
    expect(agents.map((a) => a.netnsFor('job-int'))).toEqual([
      rankNetnsName('job-int', 'e0'),
      rankNetnsName('job-int', 'e1'),
    ]);
    const token = runtimes[0]!.overlayOf('job-int')!.connects[0]!.options.admissionToken;
    expect(token).toMatch(/^gpa1\./);
    expect(answered.sort()).toEqual([
      '0 attach attached',
      '0 connect connected',
      '1 attach attached',
      '1 connect connected',
    ]);
  });

  it('answers raw malformed bytes on the subject with a failed reply naming the problem', async () => {
    const reply = await nats.nc.request(
      AttachOverlay.subject({ edgeId: edges[0]! }, nats.prefix),
      JSON.stringify({ type: 'edge.attach-overlay', version: 1, data: { jobId: 'x' } }),
      { timeout: 10_000 },
    );
    expect(reply.json<OverlayAttachReply>()).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/eventId|networkCidr/),
    });
    const connect = await nats.nc.request(
      ConnectOverlayPeers.subject({ edgeId: edges[1]! }, nats.prefix),
      new Uint8Array([0xff, 0x00]),
      {
        timeout: 10_000,
      },
    );
    expect(connect.json()).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/not JSON/) });
  });

  it('an edge nobody serves: OverlayPrepareError naming it, unanswered, and the attached edge detached', async () => {
    const ghost = `U${'C'.repeat(55)}`;
    const error = await coordinator
      .prepare({
        jobId: 'job-ghost',
        hosts: [edges[0]!, ghost].map((edgeId, i) => ({ edgeId, hostId: `h${i}` })),
        relays,
        admission: { signingKey: keys.signingKey },
        networksInUse: [],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OverlayPrepareError);
    expect(error).toMatchObject({ edgeId: ghost, stage: 'attach' });
    expect((error as OverlayPrepareError).failures[0]!.outcome).toBe('unanswered');
    expect(agents[0]!.netnsFor('job-ghost')).toBeNull();
    expect(runtimes[0]!.overlayOf('job-ghost')!.detached).toBe(1);
  });

  it('teardown detaches both edges; repeating it is harmless', async () => {
    expect(await coordinator.teardown('job-int', edges)).toEqual({ detached: edges, failed: [] });
    expect(agents.map((a) => a.netnsFor('job-int'))).toEqual([null, null]);
    expect(runtimes.map((r) => r.namespaces.size)).toEqual([0, 0]);
    expect(await coordinator.teardown('job-int', edges)).toEqual({ detached: edges, failed: [] });
  });
});
