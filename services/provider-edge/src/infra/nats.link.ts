import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { type Backoff, DEFAULT_BACKOFF, reconnectWaitMs } from '../domain/backoff';
import type { EdgeIdentity } from './identity.store';

export interface EdgeLinkOptions {
  /** `nats://host:4222`, or several. */
  readonly servers: string | string[];
  readonly identity: EdgeIdentity;
  /** Connection name the server shows (`connz`). */
  readonly name: string;
  /** Reconnect backoff. Default 250 ms doubling to 30 s, full jitter. */
  readonly backoff?: Backoff;
  readonly random?: () => number;
  /** Called on every status change (disconnect, reconnect, errors such as permission violations). */
  readonly onStatus?: (status: { type: string; data?: unknown; error?: unknown }) => void;
}

export interface EdgeLink {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  close(): Promise<void>;
}

/** The inbox prefix of an edge: NATS permissions let it subscribe to its own replies only. */
export const edgeInboxPrefix = (edgeId: string): string => `_INBOX_${edgeId}`;

/**
 * Connects the edge with its nkey (the server knows it by its public key), its own inbox prefix, and
 * reconnects forever after outages, waiting longer the longer the outage lasts (with jitter), so
 * that thousands of edges do not return in step when NATS comes back.
 */
export const connectEdge = async (options: EdgeLinkOptions): Promise<EdgeLink> => {
  const random = options.random ?? Math.random;
  let disconnectedAt: number | undefined;
  const nc = await connect({
    servers: options.servers,
    name: options.name,
    authenticator: nkeyAuthenticator(options.identity.seed),
    inboxPrefix: edgeInboxPrefix(options.identity.edgeId),
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    reconnectDelayHandler: () => {
      disconnectedAt ??= Date.now();
      return reconnectWaitMs(Date.now() - disconnectedAt, random(), options.backoff ?? DEFAULT_BACKOFF);
    },
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'reconnect') disconnectedAt = undefined;
      else if (status.type === 'disconnect') disconnectedAt ??= Date.now();
      options.onStatus?.(status);
    }
  })().catch(() => undefined);
  return {
    nc,
    js: jetstream(nc),
    close: async () => {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
};
