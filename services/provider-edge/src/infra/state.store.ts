import { EdgeIsolationSchema, EdgeReservationSchema } from '@gpunet/contracts';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';

export const STATE_FILE = 'state.json';

/**
 * A rank this edge started: kept while it runs and after it exited (idempotent re-starts,
 * exited statuses re-sent until JetStream acknowledged them), until its reservation is gone.
 */
export const RankRecordSchema = z.strictObject({
  jobId: z.string(),
  attempt: z.int().min(1),
  rank: z.int().min(0),
  localRank: z.int().min(0),
  worldSize: z.int().min(1),
  reservationId: z.string(),
  runtime: z.enum(['process', 'docker']),
  /** The runtime's id (pid, container id). */
  runtimeId: z.string(),
  workspace: z.string(),
  startedAt: z.string(),
  maxDurationMs: z.int().min(1),
  state: z.enum(['running', 'exited']),
  exitedAt: z.string().nullable(),
  exitCode: z.int().nullable(),
  signal: z.string().nullable(),
  stopReason: z.string().nullable(),
  wallSeconds: z.number().min(0),
  /** The exited status was acknowledged by JetStream. */
  reported: z.boolean(),
  /**
   * The chain the start command belonged to (its correlation) and the command itself: the rank's
   * statuses and logs carry them, so one correlation runs from the job's request to its ranks.
   * Absent in records written before they were kept.
   */
  correlationId: z.string().min(1).max(200).optional(),
  causationId: z.string().min(1).max(200).optional(),
});
export type RankRecord = z.infer<typeof RankRecordSchema>;

/** What the edge remembers across restarts. */
export const EdgeStateSchema = z.strictObject({
  version: z.literal(1),
  edgeId: z.string(),
  /** Last sequence number used in a signed report (never reused). */
  sequence: z.int().min(0),
  registeredAt: z.string().nullable(),
  lastInventoryDigest: z.string().nullable(),
  lastPolicyDigest: z.string().nullable(),
  reservations: z.array(EdgeReservationSchema),
  /** Ranks started here (absent in state files written before the edge ran ranks). */
  ranks: z.array(RankRecordSchema).default([]),
  /**
   * The isolation ranks run with, as the edge last found and reported it (`provider-edge status`
   * shows it); null before the first start.
   */
  isolation: EdgeIsolationSchema.nullable().default(null),
});
export type EdgeState = z.infer<typeof EdgeStateSchema>;

export const initialState = (edgeId: string): EdgeState => ({
  version: 1,
  edgeId,
  sequence: 0,
  registeredAt: null,
  lastInventoryDigest: null,
  lastPolicyDigest: null,
  reservations: [],
  ranks: [],
  isolation: null,
});

/** The state file is unreadable or belongs to another identity. */
export class StateFileError extends Error {
  override readonly name = 'StateFileError';
  readonly code = 'STATE_FILE_INVALID' as const;
}

/**
 * The edge's local state in one small JSON file, written atomically: a temporary file in the same
 * directory (mode 0600), fsync'ed, then renamed over the old one — a crash leaves the old or the new
 * state, never half of one.
 */
export class StateStore {
  constructor(readonly path: string) {}

  static in(dir: string): StateStore {
    return new StateStore(join(dir, STATE_FILE));
  }

  async load(edgeId: string): Promise<EdgeState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return initialState(edgeId);
      throw e;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new StateFileError(`${this.path} is not JSON`);
    }
    const parsed = EdgeStateSchema.safeParse(raw);
    if (!parsed.success)
      throw new StateFileError(
        `${this.path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    if (parsed.data.edgeId !== edgeId)
      throw new StateFileError(`${this.path} belongs to edge ${parsed.data.edgeId}, not ${edgeId}`);
    return parsed.data;
  }

  async save(state: EdgeState): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${process.pid}.${Date.now()}.tmp`;
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(`${JSON.stringify(EdgeStateSchema.parse(state), null, 2)}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(temp, this.path);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
  }
}
