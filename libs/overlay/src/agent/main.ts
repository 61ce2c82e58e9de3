import { createInterface } from 'node:readline';
import { JobOverlay } from '../edge/job-overlay';
import type { AgentMethods, AgentRequest, AgentResponse } from './agent-protocol';

/*
 * The overlay agent's process (see agent-protocol.ts). Logs go to stderr as JSON lines; stdout carries
 * only responses. SIGTERM detaches the overlay (removing the interface) before exiting.
 */

let overlay: JobOverlay | undefined;

const log = (level: string, message: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), message, ...fields })}\n`);

const respond = (response: AgentResponse) => process.stdout.write(`${JSON.stringify(response)}\n`);

const handlers: {
  [M in keyof AgentMethods]: (params: AgentMethods[M]['params']) => Promise<AgentMethods[M]['result']>;
} = {
  attach: async (params) => {
    if (overlay) throw new Error('already attached');
    overlay = await JobOverlay.attach({ ...params, log });
    return {
      endpoint: overlay.endpoint,
      ifname: overlay.ifname,
      listenPort: overlay.listenPort,
      backend: overlay.backend,
    };
  },
  connectPeers: async ({ peers, options }) => {
    if (!overlay) throw new Error('not attached');
    return overlay.connectPeers(peers, options);
  },
  pathReport: async () => {
    if (!overlay) throw new Error('not attached');
    return overlay.pathReport();
  },
  status: () =>
    Promise.resolve({
      relayConnected: overlay?.relayConnected ?? false,
      relayStats: overlay?.relayStats ? { ...overlay.relayStats } : null,
    }),
  detach: async () => {
    await overlay?.detach();
    overlay = undefined;
    return null;
  },
};

const handle = async (request: AgentRequest): Promise<void> => {
  try {
    const handler = handlers[request.method] as (params: unknown) => Promise<unknown>;
    if (typeof handler !== 'function') throw new Error(`unknown method ${String(request.method)}`);
    respond({ id: request.id, result: await handler(request.params) });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    respond({
      id: request.id,
      error: { name: e.name, message: e.message, ...('code' in e ? { code: String(e.code) } : {}) },
    });
  }
};

const shutdown = async (code: number) => {
  await overlay?.detach().catch((error: unknown) => log('error', 'detach failed', { error: String(error) }));
  process.exit(code);
};

process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  void handle(JSON.parse(line) as AgentRequest);
});
process.stdin.on('end', () => void shutdown(0));
log('info', 'overlay agent ready', { pid: process.pid });
