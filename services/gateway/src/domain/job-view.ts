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
  UsageDisputed,
  UsageMetered,
  UsageReported,
} from '@gpunet/contracts';
import { JobPathReportSchema, MinorUnitsSchema } from '@gpunet/contracts';
import { z } from 'zod';

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

const Money = MinorUnitsSchema;

/*
 * The job view, declared once: this schema is its type here, the `Job` of the OpenAPI document
 * (api.schemas.ts) and, generated from that document, the CLI's type of the gateway's answer.
 */
export const JobViewSchema = z.object({
  jobId: z.string(),
  tenantId: z.string(),
  name: z.string(),
  subnetId: z.string(),
  asset: z.string(),
  gpus: z.int(),
  gpuClasses: z
    .array(z.string())
    .meta({ description: 'GPU classes the job accepts; empty: any class the subnet allows.' }),
  maxPricePerGpuHour: Money,
  maxDurationSeconds: z.int(),
  status: z.enum(JOB_STATUSES),
  attempt: z
    .int()
    .nullable()
    .meta({ description: 'The execution attempt (1, then one more per gang restart); null before launch.' }),
  reason: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .meta({ description: 'Why it waits, failed, was rejected or is unschedulable.' }),
  submittedAt: z.string(),
  updatedAt: z.string(),
  cancelRequestedAt: z.string().nullable(),
  placement: z
    .object({
      allocations: z.array(
        z.object({
          name: z.string(),
          gpuCount: z.int(),
          pricePerHourMinor: Money,
          nodes: z.array(
            z.object({
              providerId: z.string(),
              hostId: z.string(),
              gpuUuids: z.array(z.string()),
              ranks: z.int(),
            }),
          ),
        }),
      ),
      placedAt: z.string(),
    })
    .nullable(),
  ranks: z
    .array(
      z.object({
        rank: z.int(),
        allocation: z.string(),
        providerId: z.string(),
        hostId: z.string(),
        gpuUuids: z.array(z.string()),
        gpuClass: z.string(),
        address: z.string().meta({
          description:
            "The address other ranks reach this rank's host at (its overlay address where there is one).",
        }),
      }),
    )
    .nullable(),
  paths: JobPathReportSchema.nullable(),
  usage: z
    .object({
      seq: z
        .int()
        .meta({ description: 'The highest report sequence applied; 0 once final readings arrived.' }),
      final: z.boolean(),
      providers: z.array(
        z.object({ providerId: z.string(), gpuClass: z.string(), gpus: z.int(), gpuSeconds: z.int() }),
      ),
      gpuSeconds: z.int(),
      at: z.string(),
    })
    .nullable(),
  disputes: z
    .array(
      z.object({
        providerId: z.string(),
        attempt: z.int(),
        rank: z.int(),
        edgeSeconds: z.number(),
        observedSeconds: z.number(),
        paidSeconds: z.number(),
        at: z.string(),
      }),
    )
    .optional()
    .meta({
      description:
        'Ranks whose edge claimed more wall seconds than execution observed, beyond the tolerance: the observed figure was paid. Absent in views recorded before disputes existed (none).',
    }),
  faults: z
    .array(
      z.object({
        providerId: z.string(),
        kind: z.string(),
        verified: z.boolean(),
        billableGpuSeconds: z.int(),
        detail: z.string().nullable(),
      }),
    )
    .optional()
    .meta({
      description:
        "Providers' faults execution reported at the job's end (host-lost, rank-crashed, abandoned…), with the evidence; only verified ones are slashed. Absent in views recorded before faults were reported (none).",
    }),
  cost: z.object({
    asset: z.string(),
    escrow: Money.nullable().meta({
      description: "Escrow held for the job (settlement's `job.funded`); null before funding.",
    }),
    accrued: Money.meta({ description: 'Accrued so far across providers and fees.' }),
    remaining: Money.nullable().meta({ description: 'Escrow not yet accrued.' }),
    settled: z
      .object({
        paidToProviders: Money,
        subnetFees: Money,
        platformFees: Money,
        refunded: Money,
        settledAt: z.string(),
      })
      .nullable()
      .meta({ description: 'Final figures once settled.' }),
  }),
});

export type JobView = z.output<typeof JobViewSchema>;
type PlacementView = NonNullable<JobView['placement']>;
type RankView = NonNullable<JobView['ranks']>[number];
type UsageView = NonNullable<JobView['usage']>;

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
  'usage.disputed',
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

const faultsView = (faults: PayloadOf<typeof JobCompleted>['faults']): NonNullable<JobView['faults']> =>
  faults.map((f) => ({
    providerId: f.providerId,
    kind: f.kind,
    verified: f.verified,
    billableGpuSeconds: f.billableGpuSeconds,
    detail: f.detail ?? null,
  }));

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
    case 'usage.disputed': {
      const d = event.data as PayloadOf<typeof UsageDisputed>;
      const disputes = view.disputes ?? [];
      if (disputes.some((x) => x.attempt === d.attempt && x.rank === d.rank)) return view;
      const { jobId: _jobId, ...dispute } = d;
      return patch({ disputes: [...disputes, dispute] });
    }
    case 'job.completed': {
      const d = event.data as PayloadOf<typeof JobCompleted>;
      const next = advance(view, 'completed');
      const usage = finalUsage(d.usage, d.completedAt);
      return patch({
        ...(next ?? {}),
        ...(usage ? { usage } : {}),
        ...(next ? { reason: null, faults: faultsView(d.faults ?? []) } : {}),
      });
    }
    case 'job.failed': {
      const d = event.data as PayloadOf<typeof JobFailed>;
      const next = advance(view, 'failed');
      const usage = finalUsage(d.usage, d.failedAt);
      return patch({
        ...(next ? { ...next, reason: d.reason, faults: faultsView(d.faults ?? []) } : {}),
        ...(usage ? { usage } : {}),
      });
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
export const submittedView = (
  input: Pick<
    JobView,
    | 'jobId'
    | 'tenantId'
    | 'name'
    | 'subnetId'
    | 'asset'
    | 'gpus'
    | 'maxPricePerGpuHour'
    | 'maxDurationSeconds'
    | 'submittedAt'
  > & { readonly gpuClasses: readonly string[] },
): JobView => ({
  ...input,
  gpuClasses: [...input.gpuClasses],
  status: 'submitted',
  attempt: null,
  reason: null,
  updatedAt: input.submittedAt,
  cancelRequestedAt: null,
  placement: null,
  ranks: null,
  paths: null,
  usage: null,
  disputes: [],
  faults: [],
  cost: { asset: input.asset, escrow: null, accrued: '0', remaining: null, settled: null },
});
