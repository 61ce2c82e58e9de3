import type { EdgePathReport, OverlayEndpoint, OverlayPeer } from '@gpunet/contracts';
import type { AttachOverlayOptions, ConnectPeersOptions } from '../edge/job-overlay';
import type { RelayClientStats } from '../relay/relay-client';

/*
 * The overlay agent: `JobOverlay` in a process of its own, driven by JSON lines on stdin/stdout
 * (`{ id, method, params }` → `{ id, result }` or `{ id, error }`). It lets the overlay's privileged
 * work run inside the host's network namespace — our testbed runs one per simulated host — while
 * the caller stays where it is. provider-edge may call `JobOverlay` in process instead.
 */

export interface AgentMethods {
  attach: { params: Omit<AttachOverlayOptions, 'log'>; result: AgentAttachResult };
  connectPeers: { params: { peers: OverlayPeer[]; options?: ConnectPeersOptions }; result: EdgePathReport };
  pathReport: { params: Record<string, never>; result: EdgePathReport };
  status: { params: Record<string, never>; result: AgentStatus };
  detach: { params: Record<string, never>; result: null };
}

export type AgentMethod = keyof AgentMethods;

export interface AgentAttachResult {
  readonly endpoint: OverlayEndpoint;
  readonly ifname: string;
  readonly listenPort: number;
  readonly backend: 'userspace' | 'kernel';
}

export interface AgentStatus {
  readonly relayConnected: boolean;
  readonly relayStats: RelayClientStats | null;
}

export interface AgentRequest {
  readonly id: number;
  readonly method: AgentMethod;
  readonly params: unknown;
}

export type AgentResponse =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { name: string; code?: string; message: string } };
