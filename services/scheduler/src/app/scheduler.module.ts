import {
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  ExecutionStream,
  GatewayStream,
  JobCancelled,
  JobFunded,
  JobSubmitted,
  JobSubmittedV1,
  MessageDeadLettered,
  type MessageRegistry,
  newEventId,
  type PayloadOf,
  providerCatalog,
  ProviderInventoryChanged,
  ProviderOnline,
  ProviderPolicyChanged,
  ProviderRegistered,
  ProviderReservationsChanged,
  schedulerMessages,
  SchedulerStream,
  SettlementStream,
  systemClock,
} from '@gpunet/contracts';
import {
  connectNats,
  Database,
  DurableConsumer,
  ensureStreams,
  eventingMetrics,
  EventingRuntime,
  type NatsHandle,
  OutboxRelay,
  PostgresEventStore,
} from '@gpunet/eventing';
import type { NormalizedSpec } from '@gpunet/ensemble-spec';
import type { Tx } from '@gpunet/eventing';
import type { Registry } from '@gpunet/telemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { Client } from 'pg';
import { natsPorts } from '../infra/nats.ports';
import { schedulerMigrations } from '../infra/scheduler.migrations';
import {
  type PlacementDecision,
  PlacementEngine,
  type PlacementPorts,
  type SchedulerClock,
} from './placement.engine';
import type { SchedulerConfig } from './scheduler.config';

/** Injection token of the running scheduler. */
export const SCHEDULER_RUNTIME = Symbol('gpunet.scheduler.runtime');

export interface SchedulerModuleOptions {
  readonly config: SchedulerConfig;
  /** Deadline timers and timestamps; tests pass a `FakeClock`. Default: the system clock. */
  readonly clock?: SchedulerClock;
  readonly metrics: Registry;
  readonly onError?: (error: unknown, context: string) => void;
  /** Every placement decision (`PlacementEngine`'s `onDecision`): the service logs them. */
  readonly onDecision?: (decision: PlacementDecision) => void;
  /** Replaces the NATS/event-store ports (tests). */
  readonly ports?: (defaults: PlacementPorts) => PlacementPorts;
}

/** Every message the scheduler reads or writes. */
export const schedulerRegistry = (): MessageRegistry =>
  createRegistry(
    [
      MessageDeadLettered,
      JobSubmittedV1,
      JobSubmitted,
      JobFunded,
      JobCancelled,
      ...providerCatalog,
      ...schedulerMessages,
    ],
    catalogUpcasters,
  );

export const JOBS_CONSUMER = 'scheduler-funded-jobs';
export const SPECS_CONSUMER = 'scheduler-submitted-jobs';
export const CAPACITY_CONSUMER = 'scheduler-capacity';
export const CANCELLATIONS_CONSUMER = 'scheduler-cancellations';

type FundedJob = PayloadOf<typeof JobFunded>;

/**
 * `job.funded` and `job.submitted` of one job arrive on two consumers, in either order: each
 * handler takes this per-job lock first, so the second to commit always sees the first's row. Two
 * batches locking the same jobs in opposite orders deadlock; Postgres aborts one, and the consumer
 * applies that batch again message by message.
 */
const lockJob = (tx: Tx, jobId: string): Promise<unknown> =>
  tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gpunet-scheduler-job:${tx.schema}:${jobId}`]);

const systemSchedulerClock: SchedulerClock = {
  now: () => systemClock.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
};

/**
 * The scheduler, assembled: its database (event store, outbox, inbox), NATS, four durable
 * consumers (`job.submitted` → the job's spec; `job.funded` → queued once the spec is known too;
 * capacity events → parked jobs retry; `job.cancelled` → release), the outbox relay that publishes
 * `job.queued/placed/unschedulable` on the SCHEDULER stream, and the placement engine.
 */
export class SchedulerRuntime {
  private lease: Client | undefined;
  private active = false;
  private stopped = false;

  private constructor(
    readonly config: SchedulerConfig,
    readonly db: Database,
    readonly nats: NatsHandle,
    readonly store: PostgresEventStore,
    readonly engine: PlacementEngine,
    readonly eventing: EventingRuntime,
    private readonly clock: SchedulerClock,
    private readonly onError: (error: unknown, context: string) => void,
  ) {
    engine.setActive(false);
  }

  static async create(options: SchedulerModuleOptions): Promise<SchedulerRuntime> {
    const { config } = options;
    const clock = options.clock ?? systemSchedulerClock;
    const onError = options.onError ?? (() => undefined);
    const registry = schedulerRegistry();
    const pipeline = eventingMetrics(options.metrics);
    const db = await new Database({
      url: config.databaseUrl,
      schema: config.schema,
      migrations: schedulerMigrations,
      applicationName: 'scheduler',
    }).open();
    let nats: NatsHandle;
    try {
      nats = await connectNats({ servers: config.natsUrl, name: 'scheduler' });
      await ensureStreams(
        nats.jsm,
        [
          DeadLettersStream,
          GatewayStream,
          SettlementStream,
          DiscoveryStream,
          ExecutionStream,
          SchedulerStream,
        ],
        config.prefix,
      );
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new PostgresEventStore(db, registry, config.prefix);
    const defaults = natsPorts({ nc: nats.nc, prefix: config.prefix, store, db });
    const engine = new PlacementEngine({
      ports: options.ports ? options.ports(defaults) : defaults,
      clock,
      newId: newEventId,
      reservationDeadlineMs: config.reservationDeadlineMs,
      holdMs: config.holdMs,
      maxAttempts: config.maxAttempts,
      ...(config.maxWaitMs === undefined ? {} : { maxWaitMs: config.maxWaitMs }),
      onError,
      ...(options.onDecision ? { onDecision: options.onDecision } : {}),
    });
    const common = { registry, db, ...nats, prefix: config.prefix, metrics: pipeline, onError };
    const consumers = [
      new DurableConsumer({
        ...common,
        name: JOBS_CONSUMER,
        stream: SettlementStream,
        messages: [JobFunded],
        handle: async (envelope, { tx }) => {
          const job = envelope.data as FundedJob;
          await lockJob(tx, job.jobId);
          await tx.execute(
            `INSERT INTO "${tx.schema}".open_jobs (job_id, funded, queued_since) VALUES ($1, $2, $3)
             ON CONFLICT (job_id) DO NOTHING`,
            [job.jobId, JSON.stringify(job), clock.now().toISOString()],
          );
          const known = await tx.query<{ spec: NormalizedSpec | null }>(
            `SELECT spec FROM "${tx.schema}".job_specs WHERE job_id = $1`,
            [job.jobId],
          );
          const row = known[0];
          if (row) tx.onCommit(() => engine.submit(job, row.spec));
        },
      }),
      new DurableConsumer({
        ...common,
        name: SPECS_CONSUMER,
        stream: GatewayStream,
        messages: [JobSubmittedV1, JobSubmitted],
        handle: async (envelope, { tx }) => {
          // v1 arrives upcast (spec null): such a job is placed from its terms.
          const { jobId, spec } = envelope.data as PayloadOf<typeof JobSubmitted>;
          await lockJob(tx, jobId);
          await tx.execute(
            `INSERT INTO "${tx.schema}".job_specs (job_id, spec) VALUES ($1, $2) ON CONFLICT (job_id) DO NOTHING`,
            [jobId, spec === null ? null : JSON.stringify(spec)],
          );
          const funded = await tx.query<{ funded: FundedJob; queued_since: Date | null }>(
            `SELECT funded, queued_since FROM "${tx.schema}".open_jobs WHERE job_id = $1`,
            [jobId],
          );
          const row = funded[0];
          if (row)
            tx.onCommit(() =>
              engine.submit(
                row.funded,
                spec,
                row.queued_since === null ? undefined : new Date(row.queued_since),
              ),
            );
        },
      }),
      new DurableConsumer({
        ...common,
        name: CAPACITY_CONSUMER,
        stream: DiscoveryStream,
        messages: [
          ProviderOnline,
          ProviderRegistered,
          ProviderReservationsChanged,
          ProviderInventoryChanged,
          ProviderPolicyChanged,
        ],
        handle: (envelope, { tx }) => {
          tx.onCommit(() => {
            if (envelope.type === ProviderReservationsChanged.type) {
              const { providerId, reservations } = envelope.data as PayloadOf<
                typeof ProviderReservationsChanged
              >;
              engine.reservationsChanged(
                providerId,
                reservations.flatMap((r) => r.gpuUuids),
              );
            }
            engine.capacityChanged();
          });
          return Promise.resolve();
        },
      }),
      new DurableConsumer({
        ...common,
        name: CANCELLATIONS_CONSUMER,
        stream: ExecutionStream,
        messages: [JobCancelled],
        handle: async (envelope, { tx }) => {
          const { jobId } = envelope.data as PayloadOf<typeof JobCancelled>;
          await tx.execute(`DELETE FROM "${tx.schema}".open_jobs WHERE job_id = $1`, [jobId]);
          tx.onCommit(() => engine.cancel(jobId));
        },
      }),
    ];
    const relay = new OutboxRelay({ db, js: nats.js, channel: store.channel, metrics: pipeline, onError });
    return new SchedulerRuntime(
      config,
      db,
      nats,
      store,
      engine,
      new EventingRuntime(db, nats, relay, consumers),
      clock,
      onError,
    );
  }

  /**
   * One active placer per scheduler schema: the replica holding a session advisory lock on its own
   * connection consumes, queues and reserves; the others stand by and try again every
   * `leaseRetryMs`. A standby takes over when the leader's connection (hence its lock) goes.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.tryToLead();
  }

  /** Whether this replica holds the placer lease. */
  isActive(): boolean {
    return this.active;
  }

  private async tryToLead(): Promise<void> {
    if (this.stopped || this.active) return;
    try {
      if (!this.lease) {
        const client = new Client({
          connectionString: this.config.databaseUrl,
          application_name: 'gpunet-scheduler-lease',
        });
        client.on('error', (error) => this.leaseLost(error));
        await client.connect();
        this.lease = client;
      }
      const { rows } = await this.lease.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
        [`gpunet-scheduler-placer:${this.config.schema}`],
      );
      if (rows[0]?.locked === true) {
        this.active = true;
        // Jobs funded before (a restart, or the previous leader) that got no decision yet.
        // Only those whose spec is known too; the others wait for their `job.submitted`.
        const open = await this.db.query<{
          funded: FundedJob;
          spec: NormalizedSpec | null;
          queued_since: Date | null;
        }>(
          `SELECT o.funded, s.spec, o.queued_since
             FROM "${this.config.schema}".open_jobs o JOIN "${this.config.schema}".job_specs s USING (job_id)
            ORDER BY o.funded_at, o.job_id`,
        );
        for (const row of open)
          this.engine.submit(
            row.funded,
            row.spec,
            row.queued_since === null ? undefined : new Date(row.queued_since),
          );
        this.engine.setActive(true);
        await this.eventing.onApplicationBootstrap();
        return;
      }
    } catch (error) {
      this.onError(error, 'scheduler placer lease');
    }
    if (!this.stopped) this.clock.setTimeout(() => void this.tryToLead(), this.config.leaseRetryMs ?? 5_000);
  }

  /** The lock went with its connection: stop placing at once (a standby takes over); restart to rejoin. */
  private leaseLost(error: unknown): void {
    this.onError(error, 'scheduler placer lease lost');
    this.engine.setActive(false);
    const client = this.lease;
    this.lease = undefined;
    void client?.end().catch(() => undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.engine.setActive(false);
    if (this.active) await this.eventing.beforeApplicationShutdown();
    this.active = false;
    await this.lease?.end().catch(() => undefined);
    this.lease = undefined;
  }

  /** Jobs still owed a decision (funded, not placed, unschedulable or cancelled). */
  async openJobs(): Promise<string[]> {
    const rows = await this.db.query<{ job_id: string }>(
      `SELECT job_id FROM "${this.config.schema}".open_jobs ORDER BY job_id`,
    );
    return rows.map((r) => r.job_id);
  }
}

@Module({})
export class SchedulerModule {
  static forRoot(options: SchedulerModuleOptions): DynamicModule {
    return {
      module: SchedulerModule,
      providers: [{ provide: SCHEDULER_RUNTIME, useFactory: () => SchedulerRuntime.create(options) }],
      exports: [SCHEDULER_RUNTIME],
    };
  }
}
