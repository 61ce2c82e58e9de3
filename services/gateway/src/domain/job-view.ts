import type {
  EscrowRejected,
  JobCancelled,
  JobCancelRequested,
  JobCompleted,
  JobFailed,
  JobFunded,
  JobLaunching,
  JobPathReport,
  JobPlaced,
  JobQueued,
  JobRestarting,
  JobRunning,
  JobSettled,
  JobUnschedulable,
  PayloadOf,
  UsageMetered,
  UsageReported,
} from '@gpunet/contracts';

/*
 * The gateway's read model of a job: its status, where it runs, its path report, its usage and
 * cost so far. Events reach it from four streams (gateway, settlement, scheduler, execution) with no
 * order between them, so the status only moves forward: a late `job.placed` after `job.running`
 * changes nothing, a terminal status never changes, and an older execution attempt's events are
 * ignored once a newer attempt began. Pure: the projection in infra/ loads, applies and stores.
 */

export const JOB_STATUSES = [
  'submitted',
  'funded',
  'queued',
  'placed',
  'launching',
  'running',
  'restarting',
  'completed',
  'failed',
  'cancelled',
  'rejected',
  'unschedulable',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set([
  'completed',
  'failed',
  'cancelled',
  'rejected',
  'unschedulable',
]);

const RANK: Readonly<Record<JobStatus, number>> = {
  submitted: 0,
  funded: 1,
  queued: 2,
  placed: 3,
  launching: 4,
  restarting: 4,
  running: 5,
  completed: 9,
  failed: 9,
  cancelled: 9,
  rejected: 9,
  unschedulable: 9,
};

export interface PlacementView {
  readonly allocations: readonly {
    readonly name: string;
    readonly gpuCount: number;
    readonly pricePerHourMinor: string;
    readonly nodes: readonly {
      readonly providerId: string;
      readonly hostId: string;
      readonly gpuUuids: readonly string[];
      readonly ranks: number;
    }[];
  }[];
  readonly placedAt: string;
}

export interface RankView {
  readonly rank: number;
  readonly allocation: string;
  readonly providerId: string;
  readonly hostId: string;
  readonly gpuUuids: readonly string[];
  readonly gpuClass: string;
  /** The address other ranks reach this rank's host at (its overlay address where there is one). */
  readonly address: string;
}

export interface UsageView {
  /** The highest report sequence applied; 0 once final readings arrived. */
  readonly seq: number;
  readonly final: boolean;
  readonly providers: readonly { providerId: string; gpuClass: string; gpus: number; gpuSeconds: number }[];
  readonly gpuSeconds: number;
  readonly at: string;
}

export interface CostView {
  readonly asset: string;
  /** Escrow held for the job (settlement's `job.funded`); null before funding. */
  readonly escrow: string | null;
  /** Accrued so far across providers and fees. */
  readonly accrued: string;
  /** Escrow not yet accrued. */
  readonly remaining: string | null;
  /** Final figures once settled. */
  readonly settled: {
    readonly paidToProviders: string;
    readonly subnetFees: string;
    readonly platformFees: string;
    readonly refunded: string;
    readonly settledAt: string;
  } | null;
}

export interface JobView {
  readonly jobId: string;
  readonly tenantId: string;
  readonly name: string;
  readonly subnetId: string;
  readonly asset: string;
  readonly gpus: number;
  readonly gpuClasses: readonly string[];
  readonly maxPricePerGpuHour: string;
  readonly maxDurationSeconds: number;
  readonly status: JobStatus;
  /** The execution attempt (1, then one more per gang restart); null before launch. */
  readonly attempt: number | null;
  /** Why it waits, failed, was rejected or is unschedulable. */
  readonly reason: { readonly code: string; readonly message: string } | null;
  readonly submittedAt: string;
  readonly updatedAt: string;
  readonly cancelRequestedAt: string | null;
  readonly placement: PlacementView | null;
  readonly ranks: readonly RankView[] | null;
  readonly paths: JobPathReport | null;
  readonly usage: UsageView | null;
  readonly cost: CostView;
}

/** An event as the projection sees it: type and (validated, upcast) payload. */
export interface JobEvent {
  readonly type: string;
  readonly data: unknown;
  readonly occurredAt: string;
}

/** The types of event the job view reads. */
export const JOB_VIEW_EVENT_TYPES = [
  'job.cancel-requested',
  'job.funded',
  'escrow.rejected',
  'usage.metered',
  'job.settled',
  'job.queued',
  'job.placed',
  'job.unschedulable',
  'job.launching',
  'job.running',
  'job.restarting',
  'rank.exited',
  'usage.reported',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'overlay.paths-reported',
] as const;

const isTerminal = (s: JobStatus) => TERMINAL_STATUSES.has(s);

/** Moves the status forward only (see above); `attempt` guards execution's events. */
const advance = (view: JobView, to: JobStatus, attempt?: number): Partial<JobView> | null => {
  if (isTerminal(view.status)) return null;
  if (attempt !== undefined && view.attempt !== null) {
    if (attempt < view.attempt) return null;
    if (attempt > view.attempt) return { status: to, attempt };
  }
  if (RANK[to] < RANK[view.status]) return null;
  return { status: to, ...(attempt !== undefined ? { attempt } : {}) };
};

const sumGpuSeconds = (providers: readonly { gpuSeconds: number }[]) =>
  providers.reduce((n, p) => n + p.gpuSeconds, 0);

const finalUsage = (usage: PayloadOf<typeof JobCompleted>['usage'], at: string): UsageView | undefined =>
  usage.length === 0
    ? undefined
    : {
        seq: 0,
        final: true,
        providers: usage.map((p) => ({
          providerId: p.providerId,
          gpuClass: p.gpuClass,
          gpus: p.gpus,
          gpuSeconds: p.gpuSeconds,
        })),
        gpuSeconds: sumGpuSeconds(usage),
        at,
      };

/** The view after `event`; the same object when the event changes nothing. */
export const applyJobEvent = (view: JobView, event: JobEvent): JobView => {
  const at = event.occurredAt;
  const patch = (p: Partial<JobView> | null): JobView =>
    p === null ? view : { ...view, ...p, updatedAt: at > view.updatedAt ? at : view.updatedAt };
  switch (event.type) {
    case 'job.cancel-requested': {
      const d = event.data as PayloadOf<typeof JobCancelRequested>;
      return view.cancelRequestedAt === null ? patch({ cancelRequestedAt: d.requestedAt }) : view;
    }
    case 'job.funded': {
      const d = event.data as PayloadOf<typeof JobFunded>;
      const cost = { ...view.cost, escrow: d.escrow, remaining: view.cost.remaining ?? d.escrow };
      return patch({ ...(advance(view, 'funded') ?? {}), cost });
    }
    case 'escrow.rejected': {
      const d = event.data as PayloadOf<typeof EscrowRejected>;
      const next = advance(view, 'rejected');
      return next ? patch({ ...next, reason: { code: d.reason, message: d.message } }) : view;
    }
    case 'usage.metered': {
      const d = event.data as PayloadOf<typeof UsageMetered>;
      if (view.cost.settled !== null) return view;
      return patch({ cost: { ...view.cost, accrued: d.accrued, remaining: d.remaining } });
    }
    case 'job.settled': {
      const d = event.data as PayloadOf<typeof JobSettled>;
      const accrued = (BigInt(d.paidToProviders) + BigInt(d.subnetFees) + BigInt(d.platformFees)).toString();
      return patch({
        cost: {
          asset: d.asset,
          escrow: d.funded,
          accrued,
          remaining: '0',
          settled: {
            paidToProviders: d.paidToProviders,
            subnetFees: d.subnetFees,
            platformFees: d.platformFees,
            refunded: d.refunded,
            settledAt: d.settledAt,
          },
        },
      });
    }
    case 'job.queued': {
      const d = event.data as PayloadOf<typeof JobQueued>;
      const next = advance(view, 'queued');
      return next
        ? patch({ ...next, reason: d.reason === null ? null : { code: 'QUEUED', message: d.reason } })
        : view;
    }
    case 'job.placed': {
      const d = event.data as PayloadOf<typeof JobPlaced>;
      const placement: PlacementView = {
        allocations: d.allocations.map((a) => ({
          name: a.name,
          gpuCount: a.gpuCount,
          pricePerHourMinor: a.pricePerHourMinor,
          nodes: a.nodes.map((n) => ({
            providerId: n.providerId,
            hostId: n.hostId,
            gpuUuids: n.gpuUuids,
            ranks: n.ranks,
          })),
        })),
        placedAt: d.at,
      };
      const next = advance(view, 'placed');
      return patch({ ...(next ? { ...next, reason: null } : {}), placement });
    }
    case 'job.unschedulable': {
      const d = event.data as PayloadOf<typeof JobUnschedulable>;
      const next = advance(view, 'unschedulable');
      return next ? patch({ ...next, reason: { code: d.code, message: d.message } }) : view;
    }
    case 'job.launching': {
      const d = event.data as PayloadOf<typeof JobLaunching>;
      const next = advance(view, 'launching', d.attempt);
      if (!next) return view;
      const ranks: RankView[] = d.ranks.map((r) => ({
        rank: r.rank,
        allocation: r.allocation,
        providerId: r.providerId,
        hostId: r.hostId,
        gpuUuids: r.gpuUuids,
        gpuClass: r.gpuClass,
        address: r.address,
      }));
      return patch({ ...next, ranks });
    }
    case 'job.running': {
      const d = event.data as PayloadOf<typeof JobRunning>;
      const next = advance(view, 'running', d.attempt);
      return next ? patch({ ...next, reason: null }) : view;
    }
    case 'job.restarting': {
      const d = event.data as PayloadOf<typeof JobRestarting>;
      const next = advance(view, 'restarting', d.attempt);
      return next ? patch({ ...next, reason: d.reason }) : view;
    }
    case 'usage.reported': {
      const d = event.data as PayloadOf<typeof UsageReported>;
      if (view.usage !== null && (view.usage.final || view.usage.seq >= d.seq)) return view;
      const providers = d.providers.map((p) => ({
        providerId: p.providerId,
        gpuClass: p.gpuClass,
        gpus: p.gpus,
        gpuSeconds: p.gpuSeconds,
      }));
      return patch({
        usage: {
          seq: d.seq,
          final: false,
          providers,
          gpuSeconds: sumGpuSeconds(providers),
          at: d.reportedAt,
        },
      });
    }
    case 'job.completed': {
      const d = event.data as PayloadOf<typeof JobCompleted>;
      const next = advance(view, 'completed');
      const usage = finalUsage(d.usage, d.completedAt);
      return patch({ ...(next ?? {}), ...(usage ? { usage } : {}), ...(next ? { reason: null } : {}) });
    }
    case 'job.failed': {
      const d = event.data as PayloadOf<typeof JobFailed>;
      const next = advance(view, 'failed');
      const usage = finalUsage(d.usage, d.failedAt);
      return patch({ ...(next ? { ...next, reason: d.reason } : {}), ...(usage ? { usage } : {}) });
    }
    case 'job.cancelled': {
      const d = event.data as PayloadOf<typeof JobCancelled>;
      const next = advance(view, 'cancelled');
      const usage = finalUsage(d.usage, d.cancelledAt);
      return patch({ ...(next ? { ...next, reason: null } : {}), ...(usage ? { usage } : {}) });
    }
    case 'overlay.paths-reported':
      return patch({ paths: event.data as JobPathReport });
    default:
      // rank.exited and anything else only join the job's history.
      return view;
  }
};

/** A job's view at submission. */
export const submittedView = (input: {
  jobId: string;
  tenantId: string;
  name: string;
  subnetId: string;
  asset: string;
  gpus: number;
  gpuClasses: readonly string[];
  maxPricePerGpuHour: string;
  maxDurationSeconds: number;
  submittedAt: string;
}): JobView => ({
  ...input,
  status: 'submitted',
  attempt: null,
  reason: null,
  updatedAt: input.submittedAt,
  cancelRequestedAt: null,
  placement: null,
  ranks: null,
  paths: null,
  usage: null,
  cost: { asset: input.asset, escrow: null, accrued: '0', remaining: null, settled: null },
});
