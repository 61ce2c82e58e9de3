import { request } from 'node:http';
import { connect } from 'node:net';
import { PostgreSqlContainer, type StartedPostgreSqlContainer } from '@testcontainers/postgresql';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';

/**
 * Where the Docker engine answers, from `DOCKER_HOST` (`unix://…` or `tcp://host:port`), else the
 * default socket. testcontainers honours the same variable.
 */
const dockerEndpoint = (): { socketPath: string } | { host: string; port: number } => {
  const dockerHost = process.env['DOCKER_HOST'];
  if (dockerHost === undefined || dockerHost === '') return { socketPath: '/var/run/docker.sock' };
  if (dockerHost.startsWith('unix://')) return { socketPath: dockerHost.slice('unix://'.length) };
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return { host: url.hostname, port: Number(url.port || 2375) };
};

/**
 * Whether a Docker engine answers `GET /_ping` within `timeoutMs` (default 2 000). Never throws.
 * Cheap: use it to decide whether container tests can run at all.
 */
export const dockerAvailable = (timeoutMs = 2_000): Promise<boolean> =>
  new Promise((resolve) => {
    const req = request({ ...dockerEndpoint(), path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });

/** Docker is needed but does not answer, and `CI` is set: container tests must not pass by skipping. */
export class DockerUnavailableError extends Error {
  override readonly name = 'DockerUnavailableError';
  readonly code = 'DOCKER_UNAVAILABLE' as const;
}

/**
 * Gate for a contract-tier file. Resolves `true` when Docker answers. When it does not: under `CI`
 * it throws `DockerUnavailableError` (the suite fails; a silent skip would hide a broken pipeline);
 * locally it warns loudly and resolves `false`, for `describe.skipIf(!docker)`.
 *
 * ```ts
 * const docker = await requireDocker('event store contract');
 * describe.skipIf(!docker)('event store contract', () => { … });
 * ```
 */
export const requireDocker = async (suite: string): Promise<boolean> => {
  configureTestcontainers();
  if (await dockerAvailable()) return true;
  const why =
    `${suite}: Docker does not answer (${JSON.stringify(dockerEndpoint())}). ` +
    'Run deploy/images/ensure-docker.sh (starts dockerd, builds the offline stand-in images).';
  if (isCi())
    throw new DockerUnavailableError(`${why} CI is set, so container tests fail instead of skipping.`);
  // eslint-disable-next-line no-console -- a skipped suite must be impossible to miss in the log
  console.warn(`\n${'!'.repeat(100)}\n!! SKIPPING ${why}\n${'!'.repeat(100)}\n`);
  return false;
};

const isCi = (): boolean => {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

/**
 * Settles two testcontainers defaults that do not fit here; an explicit setting of either wins.
 *
 * - Ryuk: its reaper image cannot be pulled without a registry, so containers are stopped
 *   explicitly instead (`TESTCONTAINERS_RYUK_DISABLED=true`; online CI may want Ryuk).
 * - The host that mapped ports are reached on: every port is published on 127.0.0.1 only (never on
 *   the network), so against the local engine that is the host (`TESTCONTAINERS_HOST_OVERRIDE`).
 *   Left alone, testcontainers sees `/.dockerenv` (these machines have one), decides it runs in a
 *   container and uses the bridge's gateway — 172.17.0.1 once the engine has restarted and reports
 *   it — where nothing is published: every container then "never starts listening".
 *
 * Call it before the first container (testcontainers reads both once); the helpers here do.
 */
export const configureTestcontainers = (): void => {
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  if ('socketPath' in dockerEndpoint()) process.env['TESTCONTAINERS_HOST_OVERRIDE'] ??= '127.0.0.1';
};

type PortBindings = Record<string, Array<{ HostIp?: string; HostPort?: string }> | undefined>;

/** Publishes mapped ports on 127.0.0.1 only: test containers are never reachable from the network. */
const bindToLoopback = (hostConfig: { PortBindings?: unknown }): void => {
  for (const bindings of Object.values((hostConfig.PortBindings ?? {}) as PortBindings)) {
    for (const binding of bindings ?? []) binding.HostIp ??= '127.0.0.1';
  }
};

class LoopbackContainer extends GenericContainer {
  override async start(): Promise<StartedTestContainer> {
    bindToLoopback(this.hostConfig);
    return super.start();
  }
}

class LoopbackPostgreSqlContainer extends PostgreSqlContainer {
  override async start(): Promise<StartedPostgreSqlContainer> {
    bindToLoopback(this.hostConfig);
    return super.start();
  }
}

/** Names the fix when an image is missing: nothing can be pulled here. */
const explainStartFailure = (image: string, error: unknown): Error =>
  new Error(
    `could not start a container from ${image}. Offline, images come from deploy/images/ensure-docker.sh ` +
      `(it builds local stand-ins tagged ${image}).`,
    { cause: error },
  );

/** Resolves once `host:port` accepts a TCP connection; rejects after `timeoutMs`. */
const acceptsConnections = async (host: string, port: number, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host, port });
        socket.once('connect', () => {
          socket.destroy();
          resolve();
        });
        socket.once('error', reject);
        socket.setTimeout(2_000, () => socket.destroy(new Error('connect timed out')));
      });
      return;
    } catch (error) {
      last = error;
      // A refused connection is answered at once: pace the retries.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${host}:${port} accepted no connection within ${timeoutMs} ms`, { cause: last });
};

// testcontainers reports the host as `localhost`; the port is bound on 127.0.0.1 only.
const loopbackHost = (host: string): string => (host === 'localhost' ? '127.0.0.1' : host);

export interface NatsContainerOptions {
  /** Default `nats:2` (upstream, or the local stand-in). */
  readonly image?: string;
  /** Enable JetStream (`-js`). Default true. */
  readonly jetstream?: boolean;
  /** Extra server arguments. */
  readonly args?: readonly string[];
}

/** A NATS server in a container. */
export interface NatsContainer {
  /** `nats://127.0.0.1:<mapped 4222>` */
  readonly url: string;
  /** `http://127.0.0.1:<mapped 8222>` (monitoring: /healthz, /jsz). */
  readonly monitorUrl: string;
  readonly container: StartedTestContainer;
  /** Stops and removes the container. Idempotent. */
  stop(): Promise<void>;
}

/** Starts NATS (JetStream by default) in a container on loopback-mapped ports; `stop()` it in `afterAll`. */
export const startNatsContainer = async (options: NatsContainerOptions = {}): Promise<NatsContainer> => {
  configureTestcontainers();
  const { image = 'nats:2', jetstream = true, args = [] } = options;
  const command = [...(jetstream ? ['-js'] : []), '-m', '8222', ...args];
  let container: StartedTestContainer;
  try {
    container = await new LoopbackContainer(image)
      .withCommand(command)
      .withExposedPorts(4222, 8222)
      // The upstream image is scratch: no shell to probe ports with, so wait on the server's own log line.
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .withStartupTimeout(60_000)
      .start();
  } catch (error) {
    throw explainStartFailure(image, error);
  }
  const host = loopbackHost(container.getHost());
  // "Server is ready" is the server's word; the engine's port mapping may follow a moment later.
  await acceptsConnections(host, container.getMappedPort(4222), 20_000).catch(async (error: unknown) => {
    await container.stop().catch(() => undefined);
    throw explainStartFailure(image, error);
  });
  let stopped: Promise<void> | undefined;
  return {
    url: `nats://${host}:${container.getMappedPort(4222)}`,
    monitorUrl: `http://${host}:${container.getMappedPort(8222)}`,
    container,
    stop: () => (stopped ??= container.stop().then(() => undefined)),
  };
};

export interface PostgresContainerOptions {
  /** Default `postgres:16` (upstream, or the local stand-in, which is PostgreSQL 15). */
  readonly image?: string;
  /** Default `test`. */
  readonly database?: string;
  /** Default `test`. */
  readonly username?: string;
  /** Default `test`. */
  readonly password?: string;
}

/** A PostgreSQL server in a container. */
export interface PostgresContainer {
  /** `postgres://user:password@127.0.0.1:<mapped 5432>/database` */
  readonly connectionString: string;
  readonly container: StartedPostgreSqlContainer;
  /** Stops and removes the container. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL in a container with testcontainers' `PostgreSqlContainer` (it waits for the
 * image's healthcheck and the mapped port); `stop()` it in `afterAll`.
 */
export const startPostgresContainer = async (
  options: PostgresContainerOptions = {},
): Promise<PostgresContainer> => {
  configureTestcontainers();
  const { image = 'postgres:16', database = 'test', username = 'test', password = 'test' } = options;
  let container: StartedPostgreSqlContainer;
  try {
    container = await new LoopbackPostgreSqlContainer(image)
      .withDatabase(database)
      .withUsername(username)
      .withPassword(password)
      .start();
  } catch (error) {
    throw explainStartFailure(image, error);
  }
  const url = new URL(container.getConnectionUri());
  url.hostname = loopbackHost(url.hostname);
  let stopped: Promise<void> | undefined;
  return {
    connectionString: url.toString(),
    container,
    stop: () => (stopped ??= container.stop().then(() => undefined)),
  };
};
