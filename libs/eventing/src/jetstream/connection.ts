import { jetstream, type JetStreamClient, type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export interface NatsOptions {
  /** `nats://host:port`, or several. */
  readonly servers: string | string[];
  /** Connection name the server shows in its monitoring (`connz`). */
  readonly name: string;
  /** Credentials: an nkey seed and its signer, or a user JWT; none for a local development server. */
  readonly authenticator?: Parameters<typeof connect>[0] extends infer O
    ? O extends { authenticator?: infer A }
      ? A
      : never
    : never;
  /** Wait between reconnect attempts, in ms. Default 250. */
  readonly reconnectTimeWaitMs?: number;
  /**
   * nats.js's async stack traces: an `Error` (and its stack) made up front for every request and
   * JetStream publish, to be thrown should it fail. They cost ~5 % of the outbox relay's CPU
   * (bench/eventing), so they are off by default; failures still carry their type and message.
   */
  readonly asyncTraces?: boolean;
}

export interface NatsHandle {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  close(): Promise<void>;
}

/**
 * Connects to NATS and never gives up reconnecting: a service outlives NATS outages and resumes on
 * its own (messages it must not lose wait in the outbox meanwhile).
 */
export const connectNats = async (options: NatsOptions): Promise<NatsHandle> => {
  const nc = await connect({
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectTimeWaitMs ?? 250,
    waitOnFirstConnect: false,
    noAsyncTraces: !(options.asyncTraces ?? false),
    ...(options.authenticator ? { authenticator: options.authenticator } : {}),
  });
  const jsm = await jetstreamManager(nc);
  return {
    nc,
    js: jetstream(nc),
    jsm,
    close: async () => {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
};
