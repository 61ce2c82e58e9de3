import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { testNamespace } from '../namespace';
import { natsUrl } from './targets';

export interface UseNatsOptions {
  /** Names the prefix (`t_<label>_<random>`). Default `'nats'`. */
  readonly label?: string;
  /** Server URL(s). Default: `NATS_URL` or `nats://127.0.0.1:4222`. */
  readonly servers?: string | string[];
  /** Extra connection options; `servers` is set by the helper. */
  readonly connection?: Omit<NodeConnectionOptions, 'servers'>;
}

/** A NATS connection and a namespace of its own for one test suite. */
export interface NatsTestContext {
  readonly servers: string | string[];
  readonly nc: NatsConnection;
  /**
   * The suite's namespace: prefix subjects with it (`prefixSubject(prefix, s)`) and start stream,
   * KV bucket and consumer names with it (`namespacedStream(def, prefix)` does both).
   */
  readonly prefix: string;
  /** A JetStream manager on `nc` (created once). */
  jsm(): Promise<JetStreamManager>;
  /**
   * Deletes every stream of the namespace (names starting with `prefix`, and the `KV_`/`OBJ_`
   * streams behind KV buckets and object stores named with it), then closes the connection.
   * Idempotent.
   */
  cleanup(): Promise<void>;
}

/** Names the streams that belong to `prefix`: its own, and those behind its KV buckets and object stores. */
export const belongsToNamespace = (streamName: string, prefix: string): boolean =>
  streamName.startsWith(prefix) ||
  streamName.startsWith(`KV_${prefix}`) ||
  streamName.startsWith(`OBJ_${prefix}`);

/**
 * Connects to the test NATS server (JetStream enabled) and hands out a unique prefix; `cleanup()`
 * in `afterAll` removes what the suite created.
 *
 * ```ts
 * let nats: NatsTestContext;
 * beforeAll(async () => { nats = await useNats({ label: 'outbox' }); });
 * afterAll(() => nats.cleanup());
 * ```
 */
export const useNats = async (options: UseNatsOptions = {}): Promise<NatsTestContext> => {
  const servers = options.servers ?? natsUrl();
  const prefix = testNamespace(options.label ?? 'nats');
  let nc: NatsConnection;
  try {
    nc = await connect({ ...options.connection, servers });
  } catch (error) {
    throw new Error(`cannot connect to NATS at ${String(servers)} (set NATS_URL?)`, { cause: error });
  }
  let manager: Promise<JetStreamManager> | undefined;
  const jsm = (): Promise<JetStreamManager> => (manager ??= jetstreamManager(nc));
  let cleaned: Promise<void> | undefined;
  return {
    servers,
    nc,
    prefix,
    jsm,
    cleanup: () =>
      (cleaned ??= (async () => {
        try {
          await deleteNamespaceStreams(nc.isClosed() ? undefined : await jsm(), servers, prefix);
        } finally {
          if (!nc.isClosed()) await nc.close();
        }
      })()),
  };
};

/**
 * Deletes the streams of a namespace; with no manager (the suite's connection is already closed) it
 * opens a short-lived connection of its own. Returns the deleted names.
 */
export const deleteNamespaceStreams = async (
  manager: JetStreamManager | undefined,
  servers: string | string[],
  prefix: string,
): Promise<string[]> => {
  if (manager === undefined) {
    const nc = await connect({ servers });
    try {
      return await deleteNamespaceStreams(await jetstreamManager(nc), servers, prefix);
    } finally {
      await nc.close();
    }
  }
  const doomed: string[] = [];
  for await (const name of manager.streams.names()) if (belongsToNamespace(name, prefix)) doomed.push(name);
  for (const name of doomed) await manager.streams.delete(name);
  return doomed;
};
