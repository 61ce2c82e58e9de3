import {
  buildEnvelope,
  type Envelope,
  type InputOf,
  type MessageDefinition,
  SimulatedChainDepositRequest,
  SubnetCreateRequested,
  SubnetJoinRequested,
  type SubnetParametersSchema,
} from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { z } from 'zod';
import { CLUSTER_BENCHMARKING_ENV } from './measurements';
import { type ControlPlaneService, ServiceProcess } from './service-process';

export interface DevClusterOptions {
  readonly databaseUrl: string;
  readonly natsUrl: string;
  /** Subject and stream namespace ('' in production; unique per test suite). */
  readonly prefix: string;
  /** Postgres schema of each service: `<schemaPrefix>_<service>`. */
  readonly schemaPrefix: string;
  readonly services: readonly ControlPlaneService[];
  /**
   * Extra environment per service (periods, timeouts, secrets), over the cluster's own: benchmarking
   * gets `CLUSTER_BENCHMARKING_ENV` (a new provider measured within seconds), settlement
   * `DEV_SETTLEMENT_ENV` (its NTX is a test asset).
   */
  readonly env?: Partial<Record<ControlPlaneService, Record<string, string>>>;
}

/**
 * Settlement in a development cluster: the simulated chain's NTX holds no real value, so its subnets
 * may allow simulated GPUs (the cluster's edges are simulated).
 */
export const DEV_SETTLEMENT_ENV: Readonly<Record<string, string>> = { SETTLEMENT_TEST_ASSETS: 'NTX' };

/**
 * gpunet's control plane as separate processes, the way it runs in production: each service from
 * its own `main.ts`, configured by environment only, on one NATS and one Postgres (a schema each).
 * Started in dependency order (settlement before the scheduler that waits for its funding, …) and
 * stopped in reverse.
 */
export class DevCluster {
  private constructor(
    readonly options: DevClusterOptions,
    private readonly processes: Map<ControlPlaneService, ServiceProcess>,
  ) {}

  static async start(options: DevClusterOptions): Promise<DevCluster> {
    const processes = new Map<ControlPlaneService, ServiceProcess>();
    const cluster = new DevCluster(options, processes);
    try {
      // Independent services start together; each ensures the streams it reads and writes.
      await Promise.all(
        options.services.map(async (name) => {
          const p = new ServiceProcess({
            name,
            main: `services/${name}/src/main.ts`,
            env: cluster.envOf(name),
          });
          processes.set(name, p);
          await p.start();
        }),
      );
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The environment a service runs with. */
  envOf(name: ControlPlaneService): Record<string, string> {
    const { databaseUrl, natsUrl, prefix, schemaPrefix } = this.options;
    return {
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      SUBJECT_PREFIX: prefix,
      [`${name.toUpperCase()}_SCHEMA`]: `${schemaPrefix}_${name}`,
      // No fixed metrics port: several clusters (and their tests) share a machine.
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      // Discovery's node flags (DISCOVERY_NODE_FLAGS, services/discovery/README.md "Running").
      ...(name === 'discovery'
        ? { NODE_OPTIONS: [process.env['NODE_OPTIONS'], '--max-semi-space-size=1'].filter(Boolean).join(' ') }
        : {}),
      ...(name === 'benchmarking' ? CLUSTER_BENCHMARKING_ENV : {}),
      ...(name === 'settlement' ? DEV_SETTLEMENT_ENV : {}),
      ...this.options.env?.[name],
    };
  }

  service(name: ControlPlaneService): ServiceProcess {
    const p = this.processes.get(name);
    if (!p) throw new Error(`service ${name} is not part of this cluster`);
    return p;
  }

  /** Postgres schemas the services own (to drop after a test). */
  get schemas(): string[] {
    return this.options.services.map((s) => `${this.options.schemaPrefix}_${s}`);
  }

  async stop(): Promise<void> {
    for (const p of [...this.processes.values()].reverse()) await p.stop().catch(() => undefined);
  }
}

/** Publishes a message on its JetStream subject, as the service that owns it would (tests, the demo). */
export const publishAs = async <D extends MessageDefinition>(
  js: JetStreamClient,
  prefix: string,
  def: D,
  data: InputOf<D>,
  tokens?: Record<string, string>,
): Promise<Envelope> => {
  const envelope = buildEnvelope(def, data, { streamId: `dev-${def.type}` }) as Envelope;
  await js.publish(def.subject(tokens as never, prefix), JSON.stringify(envelope), {
    msgID: envelope.eventId,
  });
  return envelope;
};

/** Deposits on settlement's simulated chain (development only); returns the wallet's available balance. */
export const depositOnSimulatedChain = async (
  nc: NatsConnection,
  prefix: string,
  ownerId: string,
  asset: string,
  amount: bigint,
): Promise<string> => {
  const reply = await askQuery(
    nc,
    SimulatedChainDepositRequest,
    { ownerId, asset, amount: amount.toString() },
    { prefix, timeoutMs: 30_000 },
  );
  return reply.available;
};

export type SubnetParameters = z.input<typeof SubnetParametersSchema>;

/** Asks settlement to create a subnet (the owner's wallet must hold the stake). */
export const requestSubnet = (
  js: JetStreamClient,
  prefix: string,
  subnet: { subnetId: string; ownerId: string; asset: string; stake: bigint; parameters: SubnetParameters },
): Promise<Envelope> =>
  publishAs(js, prefix, SubnetCreateRequested, {
    subnetId: subnet.subnetId,
    ownerId: subnet.ownerId,
    asset: subnet.asset,
    stake: subnet.stake.toString(),
    parameters: subnet.parameters,
    requestedAt: new Date().toISOString(),
  });

/** Asks settlement to let a provider into a subnet, locking `stake` from its wallet. */
export const requestSubnetJoin = (
  js: JetStreamClient,
  prefix: string,
  join: { subnetId: string; providerId: string; stake: bigint },
): Promise<Envelope> =>
  publishAs(js, prefix, SubnetJoinRequested, {
    subnetId: join.subnetId,
    providerId: join.providerId,
    stake: join.stake.toString(),
    requestedAt: new Date().toISOString(),
  });
