import type {
  AttachOverlay,
  ConnectOverlayPeers,
  InputOf,
  OverlayAttachReply,
  OverlayConnectReply,
} from '@gpunet/contracts';
import { FakeClock } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import {
  type EdgeOverlayTransport,
  generateAdmissionKeys,
  generateKeyPair,
  InvalidOverlayRequestError,
  JobOverlayCoordinator,
  type OverlayDetachReply,
  OverlayPrepareError,
  rankRelays,
  type Unanswered,
  verifyAdmissionToken,
} from '../src';

const edge = (letter: string) => `U${letter.repeat(55)}`;
const [A, B, C] = [edge('A'), edge('B'), edge('C')];
const RELAYS = [
  { relayId: 'relay-1', host: '203.0.113.10', port: 8443, stunPorts: [3478, 3479] },
  { relayId: 'relay-2', host: '203.0.113.11', port: 8443, stunPorts: [3478, 3479] },
];
const keys = generateAdmissionKeys();
const clock = new FakeClock('2030-01-01T00:00:00Z');

type AttachCommand = InputOf<typeof AttachOverlay>;
type ConnectCommand = InputOf<typeof ConnectOverlayPeers>;

/** Edges as a transport: each answers by a rule, and every command sent is recorded. */
class FakeEdges implements EdgeOverlayTransport {
  readonly sent: { kind: string; edgeId: string; command: unknown; timeoutMs: number }[] = [];
  readonly keys = new Map<string, string>();
  attachRule: (edgeId: string) => OverlayAttachReply | Unanswered | null = () => null;
  connectRule: (edgeId: string) => OverlayConnectReply | Unanswered | null = () => null;
  detachRule: (edgeId: string) => OverlayDetachReply | Unanswered = () => ({ outcome: 'detached' });

  attach(edgeId: string, command: AttachCommand, timeoutMs: number) {
    this.sent.push({ kind: 'attach', edgeId, command, timeoutMs });
    const publicKey = generateKeyPair().publicKey;
    this.keys.set(edgeId, publicKey);
    return Promise.resolve(
      this.attachRule(edgeId) ?? {
        outcome: 'attached' as const,
        endpoint: {
          jobId: command.jobId,
          publicKey,
          address: command.address,
          candidates: [
            { kind: 'host' as const, endpoint: `192.168.1.${command.address.split('.')[3]}:5000` },
          ],
          natMapping: 'endpoint-dependent' as const,
          relayId: command.relays[0]?.relayId ?? null,
        },
      },
    );
  }

  connect(edgeId: string, command: ConnectCommand, timeoutMs: number) {
    this.sent.push({ kind: 'connect', edgeId, command, timeoutMs });
    const self = command.peers.find((p) => p.edgeId === edgeId)!;
    return Promise.resolve(
      this.connectRule(edgeId) ?? {
        outcome: 'connected' as const,
        report: {
          jobId: command.jobId,
          publicKey: self.publicKey,
          address: self.address,
          natMapping: 'endpoint-dependent' as const,
          measuredAt: clock.now().toISOString(),
          peers: command.peers
            .filter((p) => p.edgeId !== edgeId)
            .map((p) => ({
              peerPublicKey: p.publicKey,
              peerAddress: p.address,
              path: 'relayed' as const,
              endpoint: null,
              relayId: 'relay-1',
              rttMs: 2,
              throughputBps: 10_000_000,
              txBytes: 0,
              rxBytes: 0,
              lastHandshakeAt: null,
            })),
        },
      },
    );
  }

  detach(edgeId: string, command: { jobId: string }, timeoutMs: number) {
    this.sent.push({ kind: 'detach', edgeId, command, timeoutMs });
    return Promise.resolve(this.detachRule(edgeId));
  }

  edgesSent(kind: string): string[] {
    return this.sent.filter((s) => s.kind === kind).map((s) => s.edgeId);
  }
}

const request = (hosts = [A, B, C], relays = RELAYS) => ({
  jobId: 'job-7',
  hosts: hosts.map((edgeId, i) => ({ edgeId, hostId: `host-${i}` })),
  relays,
  admission: { signingKey: keys.signingKey },
  networksInUse: ['100.96.0.0/24'],
});

describe('JobOverlayCoordinator.prepare', () => {
  it('allocates the network, addresses edges in rank order, attaches, signs tokens, connects and reports', async () => {
    const edges = new FakeEdges();
    const coordinator = new JobOverlayCoordinator({
      transport: edges,
      clock,
      attachTimeoutMs: 1_111,
      connectTimeoutMs: 2_222,
    });
    const overlay = await coordinator.prepare(request());

    expect(overlay.networkCidr).toBe('100.96.1.0/24');
    expect(overlay.interface).toBe('gpunet0');
    expect([A, B, C].map((e) => overlay.addressOf(e))).toEqual(['100.96.1.1', '100.96.1.2', '100.96.1.3']);
    expect(overlay.masterAddr).toBe('100.96.1.1');
    expect(overlay.hosts.map((h) => h.hostId)).toEqual(['host-0', 'host-1', 'host-2']);
    expect(() => overlay.addressOf(edge('Z'))).toThrow(InvalidOverlayRequestError);

    const attaches = edges.sent.filter((s) => s.kind === 'attach');
    expect(attaches.map((s) => s.edgeId)).toEqual([A, B, C]);
    const ranked = rankRelays('job-7', RELAYS).map((r) => r.relayId);
    for (const s of attaches) {
      const command = s.command as AttachCommand;
      expect(command.networkCidr).toBe('100.96.1.0/24');
      expect(command.relays.map((r) => r.relayId)).toEqual(ranked);
      expect(s.timeoutMs).toBe(1_111);
    }

    const connects = edges.sent.filter((s) => s.kind === 'connect');
    expect(connects.map((s) => s.edgeId)).toEqual([A, B, C]);
    for (const s of connects) {
      const command = s.command as ConnectCommand;
      expect(command.peers.map((p) => [p.edgeId, p.address, p.publicKey])).toEqual(
        [A, B, C].map((e) => [e, overlay.addressOf(e), edges.keys.get(e)]),
      );
      const claims = verifyAdmissionToken(command.admissionToken!, [keys.verifyKey], clock.now().getTime());
      expect(claims).toMatchObject({ jobId: 'job-7', publicKey: edges.keys.get(s.edgeId) });
      expect(s.timeoutMs).toBe(2_222);
    }
    expect(overlay.report).toMatchObject({ jobId: 'job-7', relayed: 3, direct: 0, other: 0 });
    expect(overlay.report.generatedAt).toBe('2030-01-01T00:00:00.000Z');
    expect(Object.keys(overlay.edgeReports)).toEqual([A, B, C]);
    expect(edges.edgesSent('detach')).toEqual([]);
  });

  it('sends no token when the job has no relays (direct paths only)', async () => {
    const edges = new FakeEdges();
    await new JobOverlayCoordinator({ transport: edges, clock }).prepare(request([A, B], []));
    const tokens = edges.sent
      .filter((s) => s.kind === 'connect')
      .map((s) => (s.command as ConnectCommand).admissionToken);
    expect(tokens).toEqual([null, null]);
  });

  it('an edge that fails to attach: typed error naming it, and the others (also the silent one) are detached', async () => {
    const edges = new FakeEdges();
    edges.attachRule = (e) =>
      e === B
        ? { outcome: 'failed', reason: 'job overlays need CAP_NET_ADMIN' }
        : e === C
          ? { outcome: 'unanswered', reason: 'no answer from the edge within 30000 ms' }
          : null;
    const error = await new JobOverlayCoordinator({ transport: edges, clock })
      .prepare(request())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OverlayPrepareError);
    expect(error).toMatchObject({
      code: 'OVERLAY_PREPARE_FAILED',
      jobId: 'job-7',
      edgeId: B,
      stage: 'attach',
      reason: 'job overlays need CAP_NET_ADMIN',
    });
    expect((error as OverlayPrepareError).failures.map((f) => [f.edgeId, f.outcome])).toEqual([
      [B, 'failed'],
      [C, 'unanswered'],
    ]);
    expect((error as Error).message).toMatch(
      /edge UB+ failed to attach: job overlays need CAP_NET_ADMIN \(and 1 more/,
    );
    expect(edges.edgesSent('connect')).toEqual([]);
    expect(edges.edgesSent('detach')).toEqual([A, C]);
  });

  it('an edge that fails to connect: every edge is detached', async () => {
    const edges = new FakeEdges();
    edges.connectRule = (e) =>
      e === C ? { outcome: 'failed', reason: 'connect failed: relay unreachable' } : null;
    const error = await new JobOverlayCoordinator({ transport: edges, clock })
      .prepare(request())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ edgeId: C, stage: 'connect', reason: 'connect failed: relay unreachable' });
    expect(edges.edgesSent('detach')).toEqual([A, B, C]);
  });

  it.each([
    { name: 'no hosts', hosts: [], message: /no hosts/ },
    { name: 'an edge twice', hosts: [A, B, A], message: /twice/ },
  ])('rejects a request with $name before sending anything', async ({ hosts, message }) => {
    const edges = new FakeEdges();
    await expect(new JobOverlayCoordinator({ transport: edges }).prepare(request(hosts))).rejects.toThrow(
      message,
    );
    expect(edges.sent).toEqual([]);
  });

  it('rejects a job id or relay off contract before sending anything, naming the field', async () => {
    const edges = new FakeEdges();
    const coordinator = new JobOverlayCoordinator({ transport: edges });
    await expect(coordinator.prepare({ ...request(), jobId: 'job 7' })).rejects.toThrow(/jobId/);
    await expect(coordinator.prepare(request([A], [{ ...RELAYS[0]!, port: 70_000 }]))).rejects.toThrow(
      /relays\.0\.port/,
    );
    expect(edges.sent).toEqual([]);
  });

  it('rejects when the pool has no free network', async () => {
    const edges = new FakeEdges();
    await expect(
      new JobOverlayCoordinator({ transport: edges }).prepare({
        ...request(),
        networksInUse: ['100.96.0.0/12'],
      }),
    ).rejects.toBeInstanceOf(InvalidOverlayRequestError);
  });
});

describe('JobOverlayCoordinator.teardown', () => {
  it('detaches every edge and reports which did not answer', async () => {
    const edges = new FakeEdges();
    edges.detachRule = (e) =>
      e === B ? { outcome: 'unanswered', reason: 'no responders' } : { outcome: 'detached' };
    const result = await new JobOverlayCoordinator({ transport: edges, detachTimeoutMs: 999 }).teardown(
      'job-7',
      [A, B, C],
    );
    expect(result).toEqual({ detached: [A, C], failed: [{ edgeId: B, reason: 'no responders' }] });
    expect(edges.sent.map((s) => [s.edgeId, s.command, s.timeoutMs])).toEqual(
      [A, B, C].map((e) => [e, { jobId: 'job-7' }, 999]),
    );
  });
});
