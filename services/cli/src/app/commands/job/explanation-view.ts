import { money, printable, table } from '../../api/format';
import type { ApiSchemas } from '../../api/responses';

type Explanation = ApiSchemas['PlacementExplanation'];

type Placement = Extract<Explanation['outcome'], { kind: 'placement' }>;
type Allocation = Placement['allocations'][number];

/** `80.2 ms`, `350 µs`, `1.25 s`. */
export const duration = (us: number): string =>
  us >= 1e6
    ? `${+(us / 1e6).toFixed(2)} s`
    : us >= 1000
      ? `${+(us / 1000).toFixed(1)} ms`
      : `${Math.round(us)} µs`;

export const bandwidth = (bps: number): string =>
  bps >= 1e9 ? `${+(bps / 1e9).toFixed(1)} Gbit/s` : `${+(bps / 1e6).toFixed(1)} Mbit/s`;

/** A figure's age at the scheduler's decision: `3 min`, `2 h`. */
const age = (ms: number): string =>
  ms < 60_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 3_600_000
      ? `${Math.round(ms / 60_000)} min`
      : ms < 86_400_000
        ? `${Math.round(ms / 3_600_000)} h`
        : `${Math.round(ms / 86_400_000)} d`;

/** `(measured 3 min before placing)`, `(estimated ±20%)`, `(lan)`. */
const provenance = (source: string, ageMs: number | null, error: number | null = null): string => {
  const parts = [source];
  if (ageMs !== null) parts.push(`${age(ageMs)} before placing`);
  if (error !== null) parts.push(`±${Math.round(error * 100)}%`);
  return `(${parts.join(' ')})`;
};

const nodesText = (nodes: readonly { hostId: string; siteId: string; gpus: number }[]): string =>
  nodes.map((n) => `${printable(n.hostId)}×${n.gpus} @${printable(n.siteId)}`).join(', ');

const allocationLines = (a: Allocation, asset: string): string[] => {
  const p = a.prediction;
  const lines = [
    `allocation ${printable(a.name)}: ${a.gpuCount} GPUs on ${a.nodes.length} node${a.nodes.length === 1 ? '' : 's'} in ${a.sites} site${a.sites === 1 ? '' : 's'}, ${money(a.pricePerHourMinor, asset)}/h (strategy ${a.strategy})`,
    `  predicted step ${duration(p.stepUs)} = compute ${duration(p.computeUs)} + communication ${duration(p.commUs)} (intra-host ${duration(p.intraHostUs)}, intra-site ${duration(p.intraSiteUs)}, inter-site ${duration(p.interSiteUs)})`,
    '',
    ...table(
      ['  NODE', 'PROVIDER', 'SITE', 'GPUS'],
      a.nodes.map((n) => [
        `  ${printable(n.hostId)}`,
        printable(n.providerId),
        printable(n.siteId),
        String(n.gpuUuids.length),
      ]),
    )
      .trimEnd()
      .split('\n'),
    '',
    '  GPUs, slowest first:',
    ...a.gpus.map(
      (g) =>
        `    ${printable(g.hostId)} ${printable(g.gpuUuid)} ${printable(g.model)}: ${g.precision} ${+g.tflops.toFixed(1)} TFLOPS ${provenance(g.source, g.ageMs)}${g.slowest ? ' — sets the pace' : ''}`,
    ),
    ...(a.gpusOmitted > 0 ? [`    … ${a.gpusOmitted} more`] : []),
  ];
  if (a.links.length > 0) {
    lines.push('  links between the chosen nodes:');
    for (const l of a.links) {
      const bw = `bandwidth ${bandwidth(l.bandwidthBps)} ${provenance(l.bandwidthSource, l.ageMs)}${l.cappedByNic ? ', NIC-capped' : ''}`;
      lines.push(
        `    ${printable(l.a)} ↔ ${printable(l.b)} (${l.scope}): rtt ${duration(l.rttUs)} ${provenance(l.rttSource, l.ageMs, l.estimateError)}, ${bw}${l.relayed ? ', relayed' : ''}`,
      );
    }
    if (a.linksOmitted > 0) lines.push(`    … ${a.linksOmitted} more pairs`);
  }
  if (a.alternatives.length === 0) lines.push('  no other gang was in the running');
  else {
    lines.push('  best alternatives not chosen:');
    a.alternatives.forEach((alt, i) =>
      lines.push(
        `    ${i + 1}. ${nodesText(alt.nodes)}: step ${duration(alt.prediction.stepUs)}, ${money(alt.pricePerHourMinor, asset)}/h`,
        `       lost (${alt.lostOn}): ${printable(alt.message)}`,
      ),
    );
  }
  return lines;
};

/** `gpunet job explain` for a person: why the job is where it is, or why it is not placed. */
export const describeExplanation = (e: Explanation, asset: string): string => {
  const head = `job ${printable(e.jobId)}: ${e.status} (attempt ${e.attempt}, explained ${e.explainedAt})`;
  if (e.outcome.kind === 'failure') {
    const f = e.outcome;
    return `${[
      head,
      `  not placed: ${f.code}${f.allocation === null ? '' : ` (allocation ${printable(f.allocation)})`}`,
      `  ${printable(f.message)}`,
      ...(f.reasons.length > 0 ? ['  reasons:'] : []),
      ...f.reasons.map(
        (r) =>
          `    ${printable(r.plugin)}/${printable(r.reason)}: ${printable(r.message)}${r.gpus === null ? '' : ` (${r.gpus} GPUs)`}`,
      ),
    ].join('\n')}\n`;
  }
  return `${[head, ...e.outcome.allocations.flatMap((a) => ['', ...allocationLines(a, asset)])].join('\n')}\n`;
};
