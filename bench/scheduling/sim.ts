import {
  applyPlacement,
  type ClusterSnapshot,
  type GangRequest,
  type Placement,
  releasePlacement,
} from '@gpunet/scheduling';
import type { Policy } from './policies';
import { type Distribution, distribution, MinHeap } from './stats';

/**
 * A discrete-event simulation of a scheduler in front of a cluster (no wall clock: time is the
 * tasks' own). Tasks arrive, wait in a FIFO queue with backfill (each scheduling pass tries at most
 * `maxTriesPerPass` queued tasks, skipping those that cannot fit by a free-GPU count), run for their
 * duration and free their GPUs. Decision latency is the wall time of each placement call.
 */
export interface SimTask {
  readonly id: string;
  /** Seconds. */
  readonly arrival: number;
  /** Seconds. */
  readonly duration: number;
  readonly gang: GangRequest;
}

export interface SimResult {
  readonly policy: string;
  readonly tasks: number;
  readonly placed: number;
  /** Tasks no state of the cluster could hold (rejected on arrival, for every policy alike). */
  readonly dropped: number;
  /** Tasks still queued when nothing more could change. */
  readonly stuck: number;
  /** Time-averaged share of all GPUs allocated between the end of the warm-up and the last arrival. */
  readonly allocationRate: number;
  readonly queueDelayS: Distribution;
  readonly decisionMs: Distribution;
  /** Predicted step time of placed multi-GPU gangs (placement quality), ms. */
  readonly stepMs: Distribution;
  readonly wallS: number;
}

export interface SimOptions {
  readonly maxTriesPerPass: number;
  /** Share of the arrival window left out of the allocation rate (the cluster filling up). */
  readonly warmup: number;
  /** Tasks that can never be placed, decided once per shape by the caller. */
  readonly neverFits: (gang: GangRequest) => boolean;
}

export const simulate = (
  start: ClusterSnapshot,
  tasks: readonly SimTask[],
  policy: Policy,
  options: SimOptions,
): SimResult => {
  const wall0 = performance.now();
  const inv = start.inventory;
  const capacity = inv.gpus.length;
  let snapshot = start;
  // Free GPUs per model, for the cheap "could it fit at all" check before a placement call.
  const freeByModel = new Map<string, number>();
  let free = 0;
  for (const g of inv.gpus) {
    if (((snapshot.freeMask[g.hostIndex]! >>> g.local) & 1) === 0) continue;
    freeByModel.set(g.model, (freeByModel.get(g.model) ?? 0) + 1);
    free++;
  }
  const modelOf = (uuid: string): string => inv.gpus[inv.gpuByUuid.get(uuid)!]!.model;
  const track = (p: Placement, sign: 1 | -1): number => {
    let n = 0;
    for (const a of p.allocations) {
      for (const node of a.nodes) {
        for (const uuid of node.gpuUuids) {
          const m = modelOf(uuid);
          freeByModel.set(m, (freeByModel.get(m) ?? 0) - sign);
          n++;
        }
      }
    }
    free -= sign * n;
    return n;
  };
  const couldFit = (g: GangRequest): boolean => {
    if (g.models.length === 0) return free >= g.gpuCount;
    let n = 0;
    for (const m of g.models) n += freeByModel.get(m) ?? 0;
    return n >= g.gpuCount;
  };

  const sorted = [...tasks].sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  const firstArrival = sorted[0]?.arrival ?? 0;
  const windowEnd = sorted[sorted.length - 1]?.arrival ?? 0;
  const windowStart = firstArrival + options.warmup * (windowEnd - firstArrival);
  const completions = new MinHeap<{ time: number; placement: Placement }>((c) => c.time);
  const queue: SimTask[] = [];
  const delays: number[] = [];
  const decisions: number[] = [];
  const steps: number[] = [];
  // GPUs already held when the simulation starts count as allocated (they stay so).
  let allocated = capacity - free;
  let integral = 0;
  let now = firstArrival;
  let next = 0;
  let placed = 0;
  let dropped = 0;
  let seed = 0;

  const advance = (to: number): void => {
    const a = Math.max(now, windowStart);
    const b = Math.min(to, windowEnd);
    if (b > a) integral += allocated * (b - a);
    now = to;
  };

  while (next < sorted.length || queue.length > 0) {
    const arrival = next < sorted.length ? sorted[next]!.arrival : Infinity;
    const completion = completions.peek()?.time ?? Infinity;
    const t = Math.min(arrival, completion);
    if (t === Infinity) break;
    advance(t);
    while ((completions.peek()?.time ?? Infinity) <= t) {
      const done = completions.pop()!;
      snapshot = releasePlacement(snapshot, done.placement);
      allocated -= track(done.placement, -1);
    }
    while (next < sorted.length && sorted[next]!.arrival <= t) {
      const task = sorted[next++]!;
      if (options.neverFits(task.gang)) dropped++;
      else queue.push(task);
    }
    let tries = 0;
    for (let i = 0; i < queue.length && tries < options.maxTriesPerPass;) {
      const task = queue[i]!;
      if (!couldFit(task.gang)) {
        i++;
        continue;
      }
      tries++;
      const t0 = performance.now();
      const p = policy.place(snapshot, task.id, task.gang, seed++);
      decisions.push(performance.now() - t0);
      if (p === null) {
        i++;
        continue;
      }
      snapshot = applyPlacement(snapshot, p);
      allocated += track(p, 1);
      placed++;
      delays.push(t - task.arrival);
      if (task.gang.gpuCount > 1) steps.push(p.allocations[0]!.prediction.stepUs / 1000);
      completions.push({ time: t + task.duration, placement: p });
      queue.splice(i, 1);
    }
  }
  const span = windowEnd - windowStart;
  return {
    policy: policy.name,
    tasks: tasks.length,
    placed,
    dropped,
    stuck: queue.length,
    allocationRate: span > 0 ? integral / (capacity * span) : NaN,
    queueDelayS: distribution(delays),
    decisionMs: distribution(decisions),
    stepMs: distribution(steps),
    wallS: (performance.now() - wall0) / 1000,
  };
};

export interface FillResult {
  readonly policy: string;
  readonly arrived: number;
  readonly placed: number;
  readonly failed: number;
  /** Allocated GPUs / all GPUs when the GPUs asked for first reach 100% of the cluster. */
  readonly allocationAtFull: number;
  /** The same at the end (asked GPUs up to `overload` × the cluster). */
  readonly allocationAtEnd: number;
  readonly decisionMs: Distribution;
  readonly wallS: number;
}

/**
 * The fragmentation experiment of Weng et al. (ATC '23, the trace's paper): tasks arrive in trace
 * order and never leave; each is placed or rejected at once. The allocation rate when the arrived
 * demand reaches the cluster's size shows how much capacity fragmentation wasted.
 */
export const fill = (
  start: ClusterSnapshot,
  tasks: readonly SimTask[],
  policy: Policy,
  overload: number,
): FillResult => {
  const wall0 = performance.now();
  const capacity = start.inventory.gpus.length;
  let snapshot = start;
  let asked = 0;
  let allocated = 0;
  let placed = 0;
  let failed = 0;
  let atFull: number | null = null;
  const decisions: number[] = [];
  let i = 0;
  while (asked < overload * capacity && tasks.length > 0) {
    const task = tasks[i % tasks.length]!;
    const id = `${task.id}#${Math.floor(i / tasks.length)}`;
    i++;
    asked += task.gang.gpuCount;
    const t0 = performance.now();
    const p = policy.place(snapshot, id, task.gang, i);
    decisions.push(performance.now() - t0);
    if (p === null) failed++;
    else {
      snapshot = applyPlacement(snapshot, p);
      allocated += task.gang.gpuCount;
      placed++;
    }
    if (atFull === null && asked >= capacity) atFull = allocated / capacity;
  }
  return {
    policy: policy.name,
    arrived: i,
    placed,
    failed,
    allocationAtFull: atFull ?? allocated / capacity,
    allocationAtEnd: allocated / capacity,
    decisionMs: distribution(decisions),
    wallS: (performance.now() - wall0) / 1000,
  };
};
