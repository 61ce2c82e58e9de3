import { rmSync } from 'node:fs';
import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { type Netns, REPO_ROOT, TestProcess, tsxArgv, tsxEnv } from '@gpunet/netns-testbed';
import { EDGE_OVERLAY_AGENT_MAIN } from '@gpunet/overlay';

export const CONTROL_NATS_PORT = 4222;

export interface ControlPlaneNats {
  /** The server as hosts of the testbed reach it (the control namespace's public address). */
  readonly hostUrl: string;
  /** The server as the test process (in the machine's own namespace) reaches it. */
  readonly localUrl: string;
  close(): Promise<void>;
}

/**
 * A NATS server on a public host of the testbed (the "control plane" edges dial out to through
 * their NATs), and a way in for the test process: a forwarder inside that namespace listens on a
 * Unix socket (files are shared by every namespace) and a local TCP listener here pipes to it.
 */
export const startControlPlaneNats = async (ns: Netns, publicAddress: string): Promise<ControlPlaneNats> => {
  const nats = ns.spawn('nats-server', ['nats-server', '-a', '0.0.0.0', '-p', String(CONTROL_NATS_PORT)]);
  await nats.waitForOutput(/Server is ready/, { timeoutMs: 30_000 });
  const socketPath = `/tmp/${ns.name}-nats.sock`;
  const forwarder = ns.spawn('nats forwarder', [
    process.execPath,
    resolve(import.meta.dirname, 'unix-forward.mjs'),
    socketPath,
    '127.0.0.1',
    String(CONTROL_NATS_PORT),
  ]);
  await forwarder.waitForOutput(/ready/, { timeoutMs: 30_000 });
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const upstream = connectTcp(socketPath);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no local port for the NATS bridge');
  return {
    hostUrl: `nats://${publicAddress}:${CONTROL_NATS_PORT}`,
    localUrl: `nats://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(socketPath, { force: true });
    },
  };
};

export interface EdgeAgentSettings {
  readonly edgeId: string;
  readonly natsUrl: string;
  readonly prefix: string;
  /** Distinct per agent: named namespaces are machine-wide. */
  readonly netnsPrefix: string;
  readonly probeWindowMs?: number;
  /** argv run between `nsenter` and the agent (`setpriv` to drop capabilities). */
  readonly wrap?: readonly string[];
  /** Extra environment (a `PATH` without wireguard-go, `OVERLAY_BACKEND`). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts `EdgeOverlayAgent`'s runner in a host's network namespace and waits until it answers
 * commands; stop it yourself (`agent.stop()`). It enters only the network namespace (`nsenter
 * --net`), not the private mount namespace `ip netns exec` would give it: the rank namespaces it
 * creates with `ip netns add` must be visible machine-wide, as they are for an edge running on the
 * host itself.
 */
export const startEdgeAgent = async (ns: Netns, settings: EdgeAgentSettings): Promise<TestProcess> => {
  const argv = [
    '/usr/bin/nsenter',
    `--net=/run/netns/${ns.name}`,
    ...(settings.wrap ?? []),
    ...tsxArgv(EDGE_OVERLAY_AGENT_MAIN),
  ];
  const agent = new TestProcess(`edge agent ${settings.netnsPrefix} (in ${ns.name})`, argv, {
    cwd: REPO_ROOT,
    env: tsxEnv({
      NATS_URL: settings.natsUrl,
      EDGE_ID: settings.edgeId,
      SUBJECT_PREFIX: settings.prefix,
      NETNS_PREFIX: settings.netnsPrefix,
      OVERLAY_PROBE_WINDOW_MS: String(settings.probeWindowMs ?? 2_000),
      ...settings.env,
    }),
  });
  await agent.waitForOutput(/edge overlay agent ready/, { timeoutMs: 60_000 });
  return agent;
};
