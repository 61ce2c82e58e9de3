import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

/** A dedicated nats-server with JetStream that a test may stop and start again (same port and store). */
export const startDedicatedNats = async () => {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'gpunet-nats-'));
  let child: ChildProcess | undefined;
  const url = `nats://127.0.0.1:${port}`;
  const start = async (): Promise<void> => {
    child = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 15_000;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      try {
        const nc = await connect({ servers: url, reconnect: false });
        await nc.close();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  const stop = async (): Promise<void> => {
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url,
    start,
    stop,
    dispose: async () => {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
};
