import { gpuTime, money, plural, shortId } from '../../api/format';
import type { Job } from '../../api/responses';

export const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'rejected', 'unschedulable']);

/** One line of cost: settled figures when settled, else what accrued of the escrow. */
export const describeCost = (job: Pick<Job, 'cost'>): string => {
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
export const describeJob = (job: Job): string => {
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
  for (const d of job.disputes ?? [])
    lines.push(
      `  disputed   rank ${d.rank} (attempt ${d.attempt}) on ${shortId(d.providerId)}: edge claimed ${d.edgeSeconds.toFixed(1)}s, observed ${d.observedSeconds.toFixed(1)}s, paid ${d.paidSeconds.toFixed(1)}s`,
    );
  for (const f of job.faults ?? [])
    lines.push(
      `  fault      ${f.kind} by ${shortId(f.providerId)} (${f.verified ? 'verified' : 'not verified'}; billable ${gpuTime(f.billableGpuSeconds)})${f.detail ? `: ${f.detail}` : ''}`,
    );
  lines.push(`  cost       ${describeCost(job)}`);
  return `${lines.join('\n')}\n`;
};
