import {
  foldEvents,
  type JobPlaced,
  newEventId,
  type PayloadOf,
  streamIdOf,
  systemClock,
} from '@gpunet/contracts';
import { CommandHandler, Database, PostgresEventStore } from '@gpunet/eventing';
import { type PostgresTestSchema, usePostgres } from '@gpunet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionRegistry } from '../src/app/execution.registry';
import {
  type ExecutionEvent,
  type ExecutionState,
  jobExecutionDecider,
  PUBLIC_EVENT_TYPES,
  STATE_CARRIED_OVER,
} from '../src/domain/job-execution.decider';
import { layoutRanks } from '../src/domain/launch-spec';
import { ExecutionJobs1764480000000, executionMigrations } from '../src/infra/execution.migrations';
import { at, edgeId, placementOf, POLICY, specOf, T0 } from './support/fixtures';

const decider = jobExecutionDecider(POLICY);
const registry = executionRegistry();

/** A job's history as the first layout's code decided it: submitted, placed and (optionally) launched. */
const historyOf = (jobId: string, launched: boolean): ExecutionEvent[] => {
  const spec = specOf({ gpus: 2 });
  const placement: PayloadOf<typeof JobPlaced> = {
    jobId,
    tenantId: 'tenant-a',
    asset: 'USDC',
    allocations: placementOf([edgeId('A'), edgeId('B')]),
    holdUntil: '2030-01-01T00:05:00.000Z',
    attempt: 1,
    at: T0,
  };
  const history: ExecutionEvent[] = [
    { type: 'execution.job-accepted', data: { jobId, tenantId: 'tenant-a', gpuClasses: [], spec } },
    { type: 'execution.job-placed', data: placement },
  ];
  if (!launched) return history;
  const layout = layoutRanks(
    spec,
    placement.allocations,
    () => '10.0.0.1',
    () => 'H100-80GB',
  );
  return [
    ...history,
    ...decider.decide({ type: 'LaunchJob', jobId, layout, now: at(0) }, foldEvents(decider, history)),
  ];
};

/**
 * The migration that moved execution's job log (`job_events`, the snapshot in `jobs`) into the
 * jobs' streams, on a database of the first layout: every job goes on from the state it had.
 */
describe('execution migrations: the job log into the job streams', () => {
  let pg: PostgresTestSchema;
  let db: Database;
  const expected = new Map<string, { state: ExecutionState; published: number }>();

  beforeAll(async () => {
    pg = await usePostgres({ label: 'execution_migrations' });
    const first = await new Database({
      url: pg.connectionString,
      schema: pg.schema,
      migrations: [ExecutionJobs1764480000000],
    }).open();
    const store = new PostgresEventStore(first, registry);
    // job-running: launched, its snapshot in `jobs`; job-waiting: placed only (no public event yet);
    // job-unsnapshotted: no snapshot in this code's format, an event under its first-layout name.
    const jobs: [string, ExecutionEvent[], 'snapshot' | 'none'][] = [
      ['job-running', historyOf('job-running', true), 'snapshot'],
      ['job-waiting', historyOf('job-waiting', false), 'snapshot'],
      [
        'job-unsnapshotted',
        [
          ...historyOf('job-unsnapshotted', true),
          {
            type: 'execution.rank-seen',
            data: {
              jobId: 'job-unsnapshotted',
              attempt: 1,
              rank: 0,
              wallSeconds: 7,
              at: at(5).toISOString(),
            },
          },
        ],
        'none',
      ],
    ];
    for (const [jobId, history, snapshot] of jobs) {
      const state = foldEvents(decider, history);
      const published = history.filter((e) => PUBLIC_EVENT_TYPES.has(e.type));
      // What the stream holds after the migration: the state carried over (whose readings stand as
      // observed: a carried job is paid as before).
      const carried = foldEvents(decider, [{ type: STATE_CARRIED_OVER, data: { state } }]);
      expected.set(jobId, { state: carried, published: published.length });
      await first.transaction(async (tx) => {
        for (const [i, e] of history.entries())
          await tx.execute(
            `INSERT INTO "${pg.schema}".job_events (job_id, version, type, data) VALUES ($1, $2, $3, $4)`,
            [jobId, i + 1, e.type === 'execution.rank-seen' ? 'execution.rank-progress' : e.type, e.data],
          );
        if (published.length > 0)
          await store.append(
            streamIdOf('job', jobId),
            published.map((e) => ({
              eventId: newEventId(),
              type: e.type,
              version: 1,
              data: e.data,
              occurredAt: T0,
              correlationId: jobId,
              causationId: null,
            })),
            { expectedVersion: 'any', tx },
          );
        await tx.execute(
          `INSERT INTO "${pg.schema}".jobs (job_id, phase, active, state, version, state_format)
           VALUES ($1, $2, true, $3, $4, $5)`,
          [
            jobId,
            state.phase,
            snapshot === 'snapshot' ? JSON.stringify(state) : null,
            history.length,
            snapshot === 'snapshot' ? 1 : null,
          ],
        );
      });
    }
    // A job that never decided anything has nothing to carry.
    await first.execute(`INSERT INTO "${pg.schema}".jobs (job_id) VALUES ('job-empty')`);
    await first.close();
    db = await new Database({
      url: pg.connectionString,
      schema: pg.schema,
      migrations: executionMigrations,
    }).open();
  });

  afterAll(async () => {
    await db?.close();
    await pg?.drop();
  });

  it('drops the job log and the snapshot columns; jobs keeps phase and active', async () => {
    const [log] = await db.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [
      `"${pg.schema}".job_events`,
    ]);
    expect(log?.t).toBeNull();
    const columns = await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'jobs'
       ORDER BY ordinal_position`,
      [pg.schema],
    );
    expect(columns.map((c) => c.column_name)).toEqual(['job_id', 'phase', 'active', 'updated_at']);
  });

  it('ends each job’s stream with the state it had, after its public events, in its correlation', async () => {
    const store = new PostgresEventStore(db, registry);
    const handler = new CommandHandler({ db, store, registry, decider, clock: systemClock });
    for (const [jobId, { state, published }] of expected) {
      const streamId = streamIdOf('job', jobId);
      expect(await handler.load(streamId)).toEqual({ state, version: published + 1 });
      const carried = (await store.readStream(streamId)).at(-1)!;
      expect(carried).toMatchObject({
        type: STATE_CARRIED_OVER,
        streamVersion: published + 1,
        correlationId: jobId,
      });
      expect(carried.causationId).toEqual(expect.any(String));
    }
    expect(await store.readStream(streamIdOf('job', 'job-empty'))).toEqual([]);
  });

  it('decides on from there: the next event follows at the next version, in the job’s correlation', async () => {
    const store = new PostgresEventStore(db, registry);
    const handler = new CommandHandler({
      db,
      store,
      registry,
      decider,
      clock: systemClock,
      publishes: (e) => PUBLIC_EVENT_TYPES.has(e.type),
    });
    const decided = await handler.handle(streamIdOf('job', 'job-waiting'), {
      type: 'CancelJob',
      jobId: 'job-waiting',
      reason: null,
      now: at(10),
    });
    expect(decided.events).toMatchObject([
      { type: 'job.cancelled', streamVersion: 2, correlationId: 'job-waiting' },
    ]);
    expect(decided.before).toEqual(expected.get('job-waiting')!.state);
  });
});
