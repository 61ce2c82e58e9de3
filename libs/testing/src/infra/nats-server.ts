import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { waitFor } from '../await/wait-for';

export interface StartNatsServerOptions {
  /** Run with JetStream (`-js`), storing in a temp dir of its own. Default true. */
  readonly jetstream?: boolean;
  /** Client port on 127.0.0.1; 0 lets the OS pick a free one. Default 0. */
  readonly port?: number;
  /** The server binary. Default: `NATS_SERVER_BIN` or Debian's `/usr/sbin/nats-server`. */
  readonly binary?: string;
  /** Extra arguments (a `-c` config with accounts, say). */
  readonly args?: readonly string[];
  /** How long a (re)start may take until the server accepts connections, in ms. Default 15 000. */
  readonly readyTimeoutMs?: number;
  /** How long `stop()` waits for a graceful exit before it kills, in ms. Default 10 000. */
  readonly stopTimeoutMs?: number;
}

/** A nats-server child process that a test owns: it can stop, crash and restart it at will. */
export interface NatsServerProcess {
  /** `nats://127.0.0.1:<port>`; stays the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** JetStream store directory (kept across restarts, removed by `dispose`). */
  readonly storeDir: string;
  /** Whether the process is running now. */
  readonly running: boolean;
  /** Graceful shutdown (SIGTERM, then SIGKILL after `stopTimeoutMs`); resolves once it exited. */
  stop(): Promise<void>;
  /** Crash: SIGKILL, no shutdown; resolves once it exited. */
  kill(): Promise<void>;
  /** Starts again on the same port and store dir; resolves once it accepts connections. No-op if running. */
  start(): Promise<void>;
  /** Stops the server and removes its store dir. Idempotent. */
  dispose(): Promise<void>;
  /** The server's recent log lines, for failure messages. */
  logs(): string;
}

const LISTENING = /Listening for client connections on [^\s:]+:(\d+)/;
const MAX_LOG_LINES = 200;

// Servers outlive a crashed test otherwise: kill every one still running when this process exits.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
const installExitHook = (): void => {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
};

/**
 * Spawns a dedicated nats-server for tests that must stop, crash or restart NATS (outage and
 * reconnect tests), which the shared server on 4222 must never suffer. Listens on 127.0.0.1 only.
 *
 * ```ts
 * const server = await startNatsServer();
 * await server.stop();   // the client sees an outage
 * await server.start();  // same port, same JetStream data
 * await server.dispose();
 * ```
 */
export const startNatsServer = async (options: StartNatsServerOptions = {}): Promise<NatsServerProcess> => {
  const {
    jetstream = true,
    binary = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server',
    args = [],
    readyTimeoutMs = 15_000,
    stopTimeoutMs = 10_000,
  } = options;
  installExitHook();
  const storeDir = await mkdtemp(join(tmpdir(), 'gpunet-nats-'));
  const logLines: string[] = [];
  const log = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line === '') continue;
      logLines.push(line);
      if (logLines.length > MAX_LOG_LINES) logLines.shift();
    }
  };
  const logs = (): string => logLines.join('\n');

  let port = options.port ?? 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const spawnServer = async (): Promise<void> => {
    const serverArgs = ['-a', '127.0.0.1', '-p', port === 0 ? '-1' : String(port)];
    if (jetstream) serverArgs.push('-js', '-sd', storeDir);
    serverArgs.push(...args);
    const proc = spawn(binary, serverArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    live.add(proc);
    // Ends the readiness wait at once when the process dies (port taken, bad flag, binary missing).
    const died = new AbortController();
    const gone = (how: string): void => {
      live.delete(proc);
      if (child === proc) child = undefined;
      died.abort(new NatsServerExitedError(how, logs()));
    };
    exited = new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        gone(signal === null ? `exit code ${code}` : `signal ${signal}`);
        resolve();
      });
    });
    // Spawn failures (binary missing) arrive here, and 'exit' may never come.
    proc.once('error', (error) => gone(`${error.name}: ${error.message}`));
    let listening: number | undefined;
    const onOutput = (chunk: Buffer): void => {
      log(chunk);
      const match = LISTENING.exec(chunk.toString('utf8'));
      if (match) listening = Number(match[1]);
    };
    proc.stdout?.on('data', onOutput);
    proc.stderr?.on('data', onOutput);

    const url = (): string => `nats://127.0.0.1:${listening}`;
    try {
      // Our own process must report its port (another server may hold a fixed one) ...
      await waitFor(() => listening, {
        timeoutMs: readyTimeoutMs,
        description: 'nats-server to listen',
        signal: died.signal,
      });
      // ... and accept a client.
      await waitFor(
        async () => {
          const nc = await connect({ servers: url(), reconnect: false, timeout: 1_000 });
          await nc.close();
          return true;
        },
        {
          timeoutMs: readyTimeoutMs,
          description: `nats-server on ${url()} to accept connections`,
          signal: died.signal,
        },
      );
    } catch (error) {
      proc.kill('SIGKILL');
      throw new Error(`nats-server (${binary} ${serverArgs.join(' ')}) did not become ready:\n${logs()}`, {
        cause: error,
      });
    }
    port = listening!;
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (proc === undefined) return;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), stopTimeoutMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  try {
    await spawnServer();
  } catch (error) {
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }

  let disposed: Promise<void> | undefined;
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    storeDir,
    get running() {
      return child !== undefined;
    },
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    start: async () => {
      if (disposed !== undefined) throw new Error('startNatsServer: start() after dispose()');
      if (child === undefined) await spawnServer();
    },
    dispose: () =>
      (disposed ??= (async () => {
        await terminate('SIGTERM');
        await rm(storeDir, { recursive: true, force: true });
      })()),
    logs,
  };
};

/** The nats-server process ended while a test waited for it to become ready. */
export class NatsServerExitedError extends Error {
  override readonly name = 'NatsServerExitedError';
  readonly code = 'NATS_SERVER_EXITED' as const;
  constructor(
    readonly exit: string,
    readonly logs: string,
  ) {
    super(`nats-server exited (${exit}) before it was ready`);
  }
}
