import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServerOptions {
  /** TCP port; 0 picks a free one (read it back from `MetricsServer.port`). */
  readonly port: number;
  /** Interface to bind; default `0.0.0.0` so Prometheus can scrape a container. */
  readonly host?: string;
  /** Served at `/metrics`. */
  readonly registry: Registry;
  /**
   * Liveness check behind `/healthz`: `true` answers 200, `false` or a throw answers 503.
   * Default: always healthy (the process answers, so it is alive).
   */
  readonly health?: () => boolean | Promise<boolean>;
}

export interface MetricsServer {
  /** The bound port (the real one when `port` was 0). */
  readonly port: number;
  /** Stops listening and drops open (keep-alive) connections. Idempotent. */
  close(): Promise<void>;
}

export const MetricsPaths = { metrics: '/metrics', health: '/healthz' } as const;

/** Serves Prometheus text at `/metrics` and a liveness answer at `/healthz`, with `node:http` only. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, health = () => true } = options;
  const server = createServer((req, res) => {
    void respond(req, res, registry, health);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    port,
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  registry: Registry,
  health: () => boolean | Promise<boolean>,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== MetricsPaths.metrics && path !== MetricsPaths.health) {
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  if (path === MetricsPaths.metrics) {
    try {
      return send(res, 200, registry.contentType, await registry.metrics(), req.method === 'HEAD');
    } catch {
      return send(res, 500, 'text/plain; charset=utf-8', 'metrics collection failed\n');
    }
  }
  const healthy = await Promise.resolve()
    .then(health)
    .catch(() => false);
  return send(
    res,
    healthy ? 200 : 503,
    'application/json',
    JSON.stringify({ status: healthy ? 'ok' : 'unavailable' }),
    req.method === 'HEAD',
  );
}

function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headOnly = false,
): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(headOnly ? undefined : body);
}
