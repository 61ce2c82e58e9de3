import { type Envelope, type MessageDefinition, buildEnvelope } from '@gpunet/contracts';
import { EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { type RunningService, runService } from '@gpunet/service-runtime';
import { createLogger } from '@gpunet/telemetry';
import {
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  serviceConnection,
} from '@gpunet/testing';
import { generateApiKey } from '../../src/app/api-keys';
import type { GatewayConfig } from '../../src/app/gateway.config';
import { gatewayHttp } from '../../src/app/gateway.http';
import { GatewayModule } from '../../src/app/gateway.module';
import { JOBS_PROJECTION } from '../../src/app/gateway.tokens';
import type { JobsProjection } from '../../src/infra/jobs.projection';

export interface GatewayHarness {
  /** The gateway as `main.ts` boots it (`runService`), without signal handlers. */
  readonly service: RunningService;
  readonly eventing: EventingRuntime;
  readonly projection: JobsProjection;
  readonly url: string;
  readonly adminKey: string;
  readonly pg: PostgresTestSchema;
  readonly nats: NatsTestContext;
  /** Creates a key for `tenantId` through the admin endpoint. */
  keyFor(tenantId: string, scopes?: readonly string[], defaultSubnet?: string): Promise<string>;
  /** Publishes an event of another service onto its (namespaced) stream, as that service would. */
  publish<D extends MessageDefinition>(def: D, data: unknown, streamId: string): Promise<Envelope>;
  close(): Promise<void>;
}

/** The real gateway on an ephemeral port, against a fresh Postgres schema and NATS namespace. */
export const startHarness = async (
  label: string,
  overrides: Partial<GatewayConfig> = {},
): Promise<GatewayHarness> => {
  const pg = await usePostgres({ label });
  const nats = await useNats({ label });
  const adminKey = generateApiKey().key;
  const config: GatewayConfig = {
    ...serviceConnection(pg, nats),
    host: '127.0.0.1',
    port: 0,
    adminKey,
    adminTenant: 'operator',
    defaultSubnet: null,
    bodyLimitBytes: 64 * 1024,
    rateLimitPerSecond: 1000,
    rateLimitBurst: 1000,
    ssePollMs: 50,
    sseHeartbeatMs: 15_000,
    maxStreams: 100,
    queryTimeoutMs: 1_000,
    keyCacheTtlMs: 5_000,
    ...overrides,
  };
  const logger = createLogger({ service: 'gateway-test', level: 'error' } as never);
  const service = await runService({
    name: 'gateway',
    module: (context) => GatewayModule.forRoot(config, context),
    http: (context) => gatewayHttp(config, context),
    handleSignals: false,
    env: {},
    logger,
  });
  const url = service.url!;
  const eventing = service.app.get<EventingRuntime>(EVENTING);
  const keyFor = async (tenantId: string, scopes = ['read', 'submit'], defaultSubnet?: string) => {
    const res = await fetch(`${url}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId, scopes, ...(defaultSubnet ? { defaultSubnet } : {}) }),
    });
    if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { key: string }).key;
  };
  return {
    service,
    eventing,
    projection: service.app.get<JobsProjection>(JOBS_PROJECTION),
    url,
    adminKey,
    pg,
    nats,
    keyFor,
    publish: async (def, data, streamId) => {
      const envelope = buildEnvelope(def, data as never, { streamId });
      await nats.nc.flush();
      const { js } = eventing.nats;
      await js.publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
        msgID: envelope.eventId,
      });
      return envelope;
    },
    close: async () => {
      await service.close();
      await nats.cleanup();
      await pg.drop();
    },
  };
};
