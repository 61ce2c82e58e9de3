import type { EdgePathReport, OverlayEndpoint, OverlayPeer } from '@gpunet/contracts';
import {
  type AttachedOverlay,
  type AttachOverlayOptions,
  type ConnectPeersOptions,
  type EdgeOverlayRuntime,
  generateKeyPair,
} from '../../src';

/** A promise with its resolver, to hold an operation open while a test looks at what happens meanwhile. */
export const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

export class FakeOverlay implements AttachedOverlay {
  readonly endpoint: OverlayEndpoint;
  readonly connects: { peers: readonly OverlayPeer[]; options: ConnectPeersOptions }[] = [];
  detached = 0;
  connectError: Error | null = null;
  connectGate: Promise<void> | null = null;

  constructor(readonly options: AttachOverlayOptions) {
    this.endpoint = {
      jobId: options.jobId,
      publicKey: generateKeyPair().publicKey,
      address: options.address,
      candidates: [{ kind: 'host', endpoint: '192.168.10.2:51820' }],
      natMapping: 'endpoint-dependent',
      relayId: options.relays[0]?.relayId ?? null,
    };
  }

  async connectPeers(peers: readonly OverlayPeer[], options: ConnectPeersOptions): Promise<EdgePathReport> {
    this.connects.push({ peers, options });
    await this.connectGate;
    if (this.connectError) throw this.connectError;
    return this.pathReport();
  }

  pathReport(): Promise<EdgePathReport> {
    return Promise.resolve({
      jobId: this.options.jobId,
      publicKey: this.endpoint.publicKey,
      address: this.options.address,
      natMapping: this.endpoint.natMapping,
      measuredAt: '2030-01-01T00:00:00.000Z',
      peers: (this.connects[0]?.peers ?? [])
        .filter((p) => p.publicKey !== this.endpoint.publicKey)
        .map((p) => ({
          peerPublicKey: p.publicKey,
          peerAddress: p.address,
          path: 'relayed' as const,
          endpoint: null,
          relayId: this.endpoint.relayId,
          rttMs: 1.5,
          throughputBps: 1_000_000,
          txBytes: 0,
          rxBytes: 0,
          lastHandshakeAt: null,
        })),
    });
  }

  detach(): Promise<void> {
    this.detached += 1;
    return Promise.resolve();
  }
}

/** The host's privileged work, recorded: namespaces as a set, overlays as `FakeOverlay`s. */
export class FakeRuntime implements EdgeOverlayRuntime {
  readonly namespaces = new Set<string>();
  readonly overlays: FakeOverlay[] = [];
  readonly calls: string[] = [];
  unavailableReason: string | null = null;
  attachError: Error | null = null;
  /** Holds `attach` of these jobs until the gate opens. */
  readonly attachGates = new Map<string, Promise<void>>();

  unavailable(): Promise<string | null> {
    return Promise.resolve(this.unavailableReason);
  }

  createNetns(name: string): Promise<void> {
    this.calls.push(`create ${name}`);
    this.namespaces.add(name);
    return Promise.resolve();
  }

  deleteNetns(name: string): Promise<void> {
    this.calls.push(`delete ${name}`);
    this.namespaces.delete(name);
    return Promise.resolve();
  }

  async attach(options: AttachOverlayOptions): Promise<AttachedOverlay> {
    this.calls.push(`attach ${options.jobId}`);
    await this.attachGates.get(options.jobId);
    if (this.attachError) throw this.attachError;
    const overlay = new FakeOverlay(options);
    this.overlays.push(overlay);
    this.calls.push(`attached ${options.jobId}`);
    return overlay;
  }

  overlayOf(jobId: string): FakeOverlay | undefined {
    return this.overlays.find((o) => o.options.jobId === jobId);
  }
}
