import { gpuTime, money, plural, shortId } from '../../api/format';

/** The gateway's job (docs/api.md `Job`), the fields the CLI shows. */
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
  readonly status: string;
  readonly attempt: number | null;
  readonly reason: { readonly code: string; readonly message: string } | null;
  readonly submittedAt: string;
  readonly updatedAt: string;
  readonly cancelRequestedAt: string | null;
  readonly placement: {
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
  } | null;
  readonly ranks:
    | readonly {
        readonly rank: number;
        readonly providerId: string;
        readonly hostId: string;
        readonly gpuClass: string;
        readonly address: string;
      }[]
    | null;
  readonly usage: { readonly gpuSeconds: number; readonly final: boolean } | null;
  readonly cost: {
    readonly asset: string;
    readonly escrow: string | null;
    readonly accrued: string;
    readonly remaining: string | null;
    readonly settled: {
      readonly paidToProviders: string;
      readonly subnetFees: string;
      readonly platformFees: string;
      readonly refunded: string;
      readonly settledAt: string;
    } | null;
  };
}

export interface JobPage {
  readonly items: readonly JobView[];
  readonly nextCursor: string | null;
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'rejected', 'unschedulable']);

/** One line of cost: settled figures when settled, else what accrued of the escrow. */
export const describeCost = (job: Pick<JobView, 'cost'>): string => {
  const c = job.cost;
  if (c.settled)
    return `${money(c.accrued, c.asset)} (providers ${money(c.settled.paidToProviders, c.asset)}, fees ${money(
      (BigInt(c.settled.subnetFees) + BigInt(c.settled.platformFees)).toString(),
      c.asset,
    )}), refunded ${money(c.settled.refunded, c.asset)}`;
  return c.escrow === null
    ? `${money(c.accrued, c.asset)} accrued (not funded yet)`
    : `${money(c.accrued, c.asset)} accrued of ${money(c.escrow, c.asset)} escrow`;
};

/** `job get` for people. */
export const describeJob = (job: JobView): string => {
  const lines = [
    `job ${job.jobId}  ${job.name}`,
    `  status     ${job.status}${job.attempt !== null ? ` (attempt ${job.attempt})` : ''}${job.reason ? ` — ${job.reason.code}: ${job.reason.message}` : ''}`,
    `  subnet     ${job.subnetId}`,
    `  gpus       ${job.gpus}${job.gpuClasses.length > 0 ? ` × ${job.gpuClasses.join('|')}` : ''}, ≤ ${money(job.maxPricePerGpuHour, job.asset)}/GPU-hour, ≤ ${job.maxDurationSeconds}s`,
    `  submitted  ${job.submittedAt}`,
    `  updated    ${job.updatedAt}`,
  ];
  if (job.cancelRequestedAt) lines.push(`  cancel     requested ${job.cancelRequestedAt}`);
  for (const a of job.placement?.allocations ?? [])
    lines.push(
      `  placed     ${a.name}: ${a.nodes.map((n) => `${shortId(n.providerId)} ${n.hostId} (${plural(n.gpuUuids.length, 'GPU')}, ${plural(n.ranks, 'rank')})`).join(', ')}; ${money(a.pricePerHourMinor, job.asset)}/hour`,
    );
  for (const r of job.ranks ?? [])
    lines.push(
      `  rank ${String(r.rank).padEnd(5)} ${shortId(r.providerId)} ${r.hostId} ${r.gpuClass} ${r.address}`,
    );
  if (job.usage)
    lines.push(`  usage      ${gpuTime(job.usage.gpuSeconds)}${job.usage.final ? ' (final)' : ''}`);
  lines.push(`  cost       ${describeCost(job)}`);
  return `${lines.join('\n')}\n`;
};
