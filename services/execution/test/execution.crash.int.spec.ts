import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import {
  buildEnvelope,
  DeadLettersStream,
  DiscoveryStream,
  EdgeRanksStream,
  type Envelope,
  ExecutionStream,
  GatewayStream,
  SchedulerStream,
  type JobCompleted,
  JobPlaced,
  JobSubmitted,
  type MessageDefinition,
  type PayloadOf,
  prefixSubject,
} from '@gpunet/contracts';
import {
  EventCollector,
  type NatsTestContext,
  type PostgresTestSchema,
  useNats,
  usePostgres,
  waitFor,
} from '@gpunet/testing';
import { ensureStreams } from '@gpunet/eventing';
import { jetstream } from '@nats-io/jetstream';
import type { Msg, Subscription } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeId, placementOf, specOf } from './support/fixtures';
import { TestEdge } from './support/test-edge';

const ROOT = resolve(import.meta.dirname, '../../..');
const MAIN = resolve(import.meta.dirname, '../src/main.ts');
// The CI machine is small and loaded: a Node process with Nest takes seconds to boot.
const TIMEOUT = { timeoutMs: 60_000 };

/**
 * The real service process (`src/main.ts`, real clock) SIGKILLed while a rank's start reply is
 * lost, and started again on the same schema: it resumes the job from its log, re-sends the start
 * it is unsure about (the edge recognises it), and the job completes with every rank started once.
 */
describe('execution SIGKILLed mid-job', () => {
  let pg: PostgresTestSchema;
  let nats: NatsTestContext;
  const events = new EventCollector<Envelope>('execution events');
  const subscriptions: Subscription[] = [];
  const children: ChildProcess[] = [];
  let a: TestEdge;
  let b: TestEdge;

  const startService = (): ChildProcess => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: pg.connectionString,
        EXECUTION_SCHEMA: pg.schema,
        NATS_URL: String(nats.servers),
        SUBJECT_PREFIX: nats.prefix,
        EXECUTION_TICK: '200ms',
        EXECUTION_EDGE_TIMEOUT: '500ms',
        EXECUTION_STOP_GRACE: '1s',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };

  const publish = async <D extends MessageDefinition>(def: D, data: PayloadOf<D>, streamId: string) => {
    const envelope = buildEnvelope(def, data as never, { streamId });
    await jetstream(nats.nc).publish(def.subject(undefined, nats.prefix), JSON.stringify(envelope), {
      msgID: envelope.eventId,
    });
  };

  beforeAll(async () => {
    pg = await usePostgres({ label: 'execution_crash' });
    nats = await useNats({ label: 'execution_crash' });
    // The streams exist before the service does (it declares the same ones when it boots).
    await ensureStreams(
      await nats.jsm(),
      [DeadLettersStream, GatewayStream, SchedulerStream, EdgeRanksStream, DiscoveryStream, ExecutionStream],
      nats.prefix,
    );
    a = new TestEdge(edgeId('P'), nats.nc, jetstream(nats.nc), nats.prefix, () => new Date());
    b = new TestEdge(edgeId('Q'), nats.nc, jetstream(nats.nc), nats.prefix, () => new Date());
    subscriptions.push(
      nats.nc.subscribe(prefixSubject(nats.prefix, 'execution.>'), {
        callback: (_e: unknown, msg: Msg) => events.push(msg.json<Envelope>()),
      }),
    );
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const s of subscriptions) s.unsubscribe();
    a?.close();
    b?.close();
    await nats?.cleanup();
    await pg?.drop();
  });

  it(
    'completes the job after a SIGKILL and a restart, starting no rank twice',
    { timeout: 180_000 },
    async () => {
      const first = startService();
      const exited = new Promise<NodeJS.Signals | null>((done) =>
        first.once('exit', (_code, signal) => done(signal)),
      );
      b.mode = 'hold'; // b starts its rank, but its reply never reaches the service
      await publish(
        JobSubmitted,
        {
          jobId: 'job-kill',
          tenantId: 'tenant-a',
          subnetId: 'public',
          asset: 'USDC',
          gpus: 2,
          gpuClasses: ['H100-80GB'],
          maxPricePerGpuHour: '9000000',
          maxDurationSeconds: 3600,
          submittedAt: new Date().toISOString(),
          spec: specOf({ gpus: 2 }),
        },
        'job-job-kill',
      );
      await publish(
        JobPlaced,
        {
          jobId: 'job-kill',
          tenantId: 'tenant-a',
          asset: 'USDC',
          allocations: placementOf([a.id, b.id]),
          holdUntil: new Date(Date.now() + 300_000).toISOString().replace(/\.\d+Z$/, '.000Z'),
          attempt: 1,
          at: new Date().toISOString(),
        },
        'job-job-kill',
      );
      await waitFor(() => a.createdFor('job-kill') === 1 && b.createdFor('job-kill') === 1, {
        ...TIMEOUT,
        description: 'both ranks started by the first process',
      });
      first.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const startsBefore = b.startRequests.length;
      b.mode = 'normal';
      startService();
      await waitFor(() => b.startRequests.length > startsBefore, {
        ...TIMEOUT,
        description: 'the restarted service re-sends the unanswered start',
      });
      await events.waitFor((e) => e.type === 'job.running', TIMEOUT);
      // Honest edges on the real clock: each reports how long its rank has run.
      const ran = (e: TestEdge, rank: number) => e.ranSeconds('job-kill', 1, rank);
      const claimed = [ran(a, 0), ran(b, 1)];
      await a.exit('job-kill', 1, 0, 0, claimed[0]!);
      await b.exit('job-kill', 1, 1, 0, claimed[1]!);
      const completed = await events.waitFor((e) => e.type === 'job.completed', TIMEOUT);
      // Paid per rank: the lower of the claim and what the service observed (b's start was only
      // seen once the restarted service asked again), never more than the edge ran.
      const usage = (completed.data as PayloadOf<typeof JobCompleted>).usage;
      expect(usage).toHaveLength(2);
      usage.forEach((u, i) => expect(u.gpuSeconds).toBeLessThanOrEqual(Math.floor(claimed[i]!)));
      expect(a.createdFor('job-kill')).toBe(1);
      expect(b.createdFor('job-kill')).toBe(1);
      await waitFor(() => a.released.length === 1 && b.released.length === 1, {
        ...TIMEOUT,
        description: 'reservations released',
      });
    },
  );
});
