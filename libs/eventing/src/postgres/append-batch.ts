import { Batcher, type BatcherOptions } from '../batcher';
import type { TraceRecord } from '../tracing';
import type { Tx } from './database';

/** One append, validated and ready for `append_batch` (migration 0002). */
export interface PreparedAppend {
  readonly streamId: string;
  /** The version the stream must be at; null for any. */
  readonly expected: number | null;
  readonly events: readonly {
    readonly eventId: string;
    readonly type: string;
    readonly version: number;
    readonly dataJson: string;
    readonly correlationId: string;
    readonly causationId: string | null;
    readonly occurredAt: string;
    /** Null for a private event: no outbox row. */
    readonly subject: string | null;
  }[];
  readonly trace: TraceRecord | null;
}

/** What happened to one append of a batch. */
export type AppendOutcome =
  | {
      readonly ok: true;
      readonly current: number;
      readonly positions: readonly number[];
      readonly versions: readonly number[];
    }
  | { readonly ok: false; readonly current: number };

interface Row {
  out_append: number;
  out_current: number;
  out_position: string | null;
  out_version: number | null;
}

/** Runs several appends in one `append_batch` call inside `tx`; one outcome per append, in order. */
export const runAppendBatch = async (
  tx: Tx,
  appends: readonly PreparedAppend[],
): Promise<AppendOutcome[]> => {
  const events = appends.flatMap((a) => a.events.map((e) => ({ ...e, trace: a.trace })));
  const rows = await tx.query<Row>(
    `SELECT * FROM "${tx.schema}".append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      appends.map((a) => a.streamId),
      appends.map((a) => a.expected),
      appends.map((a) => a.events.length),
      events.map((e) => e.eventId),
      events.map((e) => e.type),
      events.map((e) => e.version),
      events.map((e) => e.dataJson),
      events.map((e) => e.correlationId),
      events.map((e) => e.causationId),
      events.map((e) => e.occurredAt),
      events.map((e) => e.subject),
      events.map((e) => (e.trace ? JSON.stringify(e.trace) : null)),
    ],
    // Prepared once per pooled connection, in a caller's transaction as in the group commit.
    'gpunet_append_batch',
  );
  // The rows of each append, in one pass (a call carries up to `maxBatch` appends).
  const byAppend = appends.map((): Row[] => []);
  for (const r of rows) byAppend[r.out_append - 1]?.push(r);
  return appends.map((_, i) => {
    const mine = byAppend[i]!.sort((x, y) => (x.out_version ?? 0) - (y.out_version ?? 0));
    const current = Number(mine[0]?.out_current ?? 0);
    if (mine.length === 0 || mine.some((r) => r.out_position === null)) return { ok: false, current };
    return {
      ok: true,
      current,
      positions: mine.map((r) => Number(r.out_position)),
      versions: mine.map((r) => r.out_version!),
    };
  });
};

export type AppendBatcherOptions = BatcherOptions;

/**
 * Group commit for appends outside a caller's transaction (a `Batcher`): N concurrent appends cost
 * about one round trip and one commit instead of N. Each append still resolves only after its
 * commit, and a conflict rejects that append alone; a database failure rejects every append of the
 * call (none of them committed). `onCommitted` runs once per call that committed anything, before
 * its appends resolve.
 */
export class AppendBatcher extends Batcher<PreparedAppend, AppendOutcome> {
  constructor(
    run: (appends: readonly PreparedAppend[]) => Promise<AppendOutcome[]>,
    onCommitted: () => void,
    options: AppendBatcherOptions = {},
  ) {
    super(async (appends) => {
      const outcomes = await run(appends);
      if (outcomes.some((o) => o.ok)) onCommitted();
      return outcomes;
    }, options);
  }
}
