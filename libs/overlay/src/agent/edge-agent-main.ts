import { parseServiceEnv } from '@gpunet/service-runtime';
import { connect } from '@nats-io/transport-node';
import { z } from 'zod';
import { EdgeOverlayAgent } from '../edge/edge-overlay-agent';

/*
 * `EdgeOverlayAgent` on its own: connects to NATS and answers this edge's overlay commands — what the
 * namespace tests run on each simulated host, and a way to try the command plane on a machine
 * without provider-edge. provider-edge mounts the agent on its own connection instead (README).
 * Logs are JSON lines on stderr; SIGTERM detaches every job before exiting.
 */

const env = parseServiceEnv(
  'edge-overlay-agent',
  z.object({
    NATS_URL: z
      .string()
      .regex(/^(nats|tls):\/\//, 'must be a nats:// URL')
      .default('nats://127.0.0.1:4222'),
    EDGE_ID: z.string().regex(/^U[A-Z2-7]{55}$/, "must be an edge id: the edge's public user nkey"),
    SUBJECT_PREFIX: z
      .string()
      .regex(/^([A-Za-z0-9_-]+)?$/)
      .default(''),
    NETNS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,40}$/)
      .default('gpunet'),
    /** How long connect probes direct paths before settling, ms. */
    OVERLAY_PROBE_WINDOW_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
    OVERLAY_MEASURE_THROUGHPUT: z.enum(['true', 'false']).default('true'),
    OVERLAY_BACKEND: z.enum(['auto', 'userspace', 'kernel']).default('auto'),
  }),
  process.env,
);

const log = (level: string, message: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), message, ...fields })}\n`);

const main = async (): Promise<void> => {
  const nc = await connect({ servers: env.NATS_URL, name: `edge-overlay-${env.EDGE_ID.slice(0, 8)}` });
  const agent = new EdgeOverlayAgent({
    nc,
    edgeId: env.EDGE_ID,
    prefix: env.SUBJECT_PREFIX,
    netnsPrefix: env.NETNS_PREFIX,
    attach: { backend: env.OVERLAY_BACKEND },
    connect: {
      windowMs: env.OVERLAY_PROBE_WINDOW_MS,
      measureThroughput: env.OVERLAY_MEASURE_THROUGHPUT === 'true',
    },
    log,
  });
  await agent.start();

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await agent.stop().catch((error: unknown) => log('error', 'stop failed', { error: String(error) }));
    await nc.close().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  log('info', 'edge overlay agent ready', { pid: process.pid, edgeId: env.EDGE_ID });
};

main().catch((error: unknown) => {
  log('error', 'edge overlay agent failed to start', { error: String(error) });
  process.exit(1);
});
