/*
 * The scheduler's queue, fair across orchestrators: higher priority first; within a priority,
 * tenants take turns (round-robin in the order they first queued); within a tenant, first in first
 * out. A job waiting for capacity is parked and becomes ready again on a capacity event. Pure:
 * every operation returns a new queue.
 */

export interface QueueEntry {
  readonly jobId: string;
  readonly tenantId: string;
  /** Larger runs first. */
  readonly priority: number;
  /** Insertion order (ties). */
  readonly seq: number;
  /** False while the job waits for capacity (parked). */
  readonly ready: boolean;
}

export interface FairQueue {
  readonly entries: readonly QueueEntry[];
  /** The tenant served last at each priority (the turn passes to the next one). */
  readonly lastTenant: Readonly<Record<number, string>>;
  readonly tenantOrder: readonly string[];
  readonly nextSeq: number;
}

export const emptyQueue: FairQueue = { entries: [], lastTenant: {}, tenantOrder: [], nextSeq: 1 };

export const enqueue = (queue: FairQueue, jobId: string, tenantId: string, priority = 0): FairQueue => {
  if (queue.entries.some((e) => e.jobId === jobId)) return markReady(queue, [jobId]);
  return {
    ...queue,
    entries: [...queue.entries, { jobId, tenantId, priority, seq: queue.nextSeq, ready: true }],
    tenantOrder: queue.tenantOrder.includes(tenantId) ? queue.tenantOrder : [...queue.tenantOrder, tenantId],
    nextSeq: queue.nextSeq + 1,
  };
};

export const remove = (queue: FairQueue, jobId: string): FairQueue => ({
  ...queue,
  entries: queue.entries.filter((e) => e.jobId !== jobId),
});

/** Parks a job until the next capacity event. */
export const park = (queue: FairQueue, jobId: string): FairQueue => ({
  ...queue,
  entries: queue.entries.map((e) => (e.jobId === jobId ? { ...e, ready: false } : e)),
});

/** Capacity changed: the parked jobs (all, or those named) may fit now. */
export const markReady = (queue: FairQueue, jobIds?: readonly string[]): FairQueue => ({
  ...queue,
  entries: queue.entries.map((e) =>
    jobIds === undefined || jobIds.includes(e.jobId) ? { ...e, ready: true } : e,
  ),
});

/** The next job to try and the queue without it, or null when no job is ready. */
export const takeNext = (queue: FairQueue): { entry: QueueEntry; queue: FairQueue } | null => {
  const ready = queue.entries.filter((e) => e.ready);
  if (ready.length === 0) return null;
  const priority = Math.max(...ready.map((e) => e.priority));
  const atPriority = ready.filter((e) => e.priority === priority);
  const tenants = queue.tenantOrder.filter((t) => atPriority.some((e) => e.tenantId === t));
  const last = queue.lastTenant[priority];
  const lastIndex = last === undefined ? -1 : queue.tenantOrder.indexOf(last);
  // The first tenant after the last one served, in queue.tenantOrder, wrapping around.
  const tenant = tenants.find((t) => queue.tenantOrder.indexOf(t) > lastIndex) ?? tenants[0];
  if (tenant === undefined) return null;
  const entry = atPriority.filter((e) => e.tenantId === tenant).reduce((a, b) => (b.seq < a.seq ? b : a));
  return {
    entry,
    queue: { ...remove(queue, entry.jobId), lastTenant: { ...queue.lastTenant, [priority]: tenant } },
  };
};
