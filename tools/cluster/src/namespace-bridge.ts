import { type Netns, REPO_ROOT, type TestProcess } from '@gpunet/netns-testbed';
import { rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const FORWARDER = resolve(REPO_ROOT, 'tools/cluster/scripts/forward-to-unix.mjs');

/**
 * Carries TCP from inside network namespaces to a server of the machine's own namespace (NATS,
 * say) without routing between them: a unix socket served here (filesystem sockets cross network
 * namespaces) and, in each namespace, a forwarder listening on its loopback. The namespaces stay
 * as isolated as the testbed made them; only this one port reaches the host.
 */
export class NamespaceBridge {
  private readonly forwarders: TestProcess[] = [];

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly socketPath: string,
  ) {}

  /** Serves `socketPath` and connects each accepted connection to `target`. */
  static async open(label: string, target: { host: string; port: number }): Promise<NamespaceBridge> {
    const socketPath = join(tmpdir(), `gpunet-bridge-${process.pid}-${label}.sock`);
    await rm(socketPath, { force: true });
    const sockets = new Set<Socket>();
    const server = createServer((inbound) => {
      const outbound = createConnection(target);
      sockets.add(inbound).add(outbound);
      inbound.pipe(outbound).pipe(inbound);
      const close = () => {
        inbound.destroy();
        outbound.destroy();
        sockets.delete(inbound);
        sockets.delete(outbound);
      };
      inbound.on('error', close).on('close', close);
      outbound.on('error', close).on('close', close);
    });
    await new Promise<void>((ok, fail) => server.once('error', fail).listen(socketPath, ok));
    return new NamespaceBridge(server, sockets, socketPath);
  }

  /** Makes `127.0.0.1:<port>` inside `ns` reach the target. Resolves once the forwarder listens. */
  async into(ns: Netns, port: number): Promise<void> {
    // Loopback inside a fresh namespace is down until brought up.
    await ns.exec(['ip', 'link', 'set', 'lo', 'up']);
    const proc = ns.spawn(`bridge-${port}`, [
      process.execPath,
      FORWARDER,
      '127.0.0.1',
      String(port),
      this.socketPath,
    ]);
    this.forwarders.push(proc);
    await proc.waitForOutput(/forwarding/, { timeoutMs: 20_000 });
  }

  async close(): Promise<void> {
    for (const f of this.forwarders) f.kill('SIGTERM');
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((ok) => this.server.close(() => ok()));
    await rm(this.socketPath, { force: true });
  }
}
