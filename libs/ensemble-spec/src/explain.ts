import { minNodes } from './allocation';
import { describeMatch } from './location';
import type { Allocation, GpuRequirement, Location, NormalizedSpec } from './normalized.schema';
import { escrowCeilingMinor, totalGpus } from './normalize';
import { PRECISIONS } from './source.schema';
import { describeBandwidth, describeDurationUs, describeSize, formatMoney } from './units';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `>=12.2.0` → `≥ 12.2`; `>=12.1.0 <13.0.0-0` → `≥ 12.1 and < 13.0`; anything else verbatim. */
export const describeRange = (range: string): string => {
  const part = (p: string): string | undefined => {
    const m = /^(>=|<=|>|<|=)?(\d+)\.(\d+)\.(\d+)(-0)?$/.exec(p);
    if (!m) return undefined;
    const op = { '>=': '≥', '<=': '≤', '>': '>', '<': '<', '=': '=' }[m[1] ?? '='] ?? '=';
    const version = m[4] === '0' ? `${m[2]}.${m[3]}` : `${m[2]}.${m[3]}.${m[4]}`;
    return `${op} ${version}`;
  };
  if (range === '*' || range === '') return 'any version';
  if (range.includes('||')) return range;
  const parts = range.split(' ').map(part);
  return parts.every((p) => p !== undefined) ? parts.join(' and ') : range;
};

const vendorWord = (v: GpuRequirement['vendor']): string =>
  ({ nvidia: 'NVIDIA', amd: 'AMD', any: 'any vendor' })[v];

/** The GPU requirement in words: "16 GPUs, NVIDIA, ≥ 80 GB each, compute ≥ 9.0, CUDA ≥ 12.2". */
export const describeGpus = (g: GpuRequirement): string => {
  const parts = [plural(g.count, 'GPU'), vendorWord(g.vendor)];
  if (g.models.length > 0) parts.push(`model ${g.models.join(' or ')}`);
  if (g.minVramBytes > 0) parts.push(`≥ ${describeSize(g.minVramBytes)} each`);
  if (g.minComputeCapability)
    parts.push(`compute ≥ ${g.minComputeCapability.major}.${g.minComputeCapability.minor}`);
  if (g.amdArchitectures.length > 0) parts.push(`architecture ${g.amdArchitectures.join(' or ')}`);
  if (g.cuda) parts.push(`CUDA ${describeRange(g.cuda)}`);
  if (g.rocm) parts.push(`ROCm ${describeRange(g.rocm)}`);
  for (const p of PRECISIONS) {
    const v = g.minTflops[p];
    if (v !== null) parts.push(`≥ ${v} ${p === 'int8' ? 'INT8 TOPS' : `${p.toUpperCase()} TFLOPS`}`);
  }
  if (g.count > 1) parts.push(g.mixedModels ? 'models may differ' : 'all the same model');
  return parts.join(', ');
};

const describeLocation = (l: Location): string[] => {
  const out: string[] = [];
  if (l.accept.length > 0) out.push(`only in ${l.accept.map(describeMatch).join(' or ')}`);
  if (l.reject.length > 0) out.push(`never in ${l.reject.map(describeMatch).join(' or ')}`);
  return out;
};

/** The placement part in words: "at most 2 nodes, ≥ 100 Gbps between nodes". */
export const describePlacement = (a: Allocation): string => {
  const d = a.distributed;
  if (d === null) return 'on one node';
  const parts: string[] = [];
  const lo = minNodes(a);
  parts.push(
    lo === d.maxNodes
      ? `on exactly ${plural(lo, 'node')}`
      : lo > 1
        ? `on ${lo} to ${d.maxNodes} nodes`
        : `at most ${plural(d.maxNodes, 'node')}`,
  );
  const perNode = d.gpusPerNode ?? d.ranksPerNode;
  const unit = d.gpusPerNode ? 'GPU' : 'rank';
  if (
    perNode.min > (d.gpusPerNode ? d.gpusPerRank : 1) ||
    perNode.max < (d.gpusPerNode ? a.resources.gpus!.count : a.ranks)
  ) {
    parts.push(
      perNode.min === perNode.max
        ? `${plural(perNode.min, unit)} per node`
        : `${perNode.min}–${perNode.max} ${unit}s per node`,
    );
  }
  if (d.maxNodes > 1) {
    parts.push(
      {
        pack: 'packed onto as few nodes as possible',
        spread: 'spread over as many nodes as allowed',
        any: 'placed by price',
      }[d.placement],
    );
    if (d.interconnect.minBandwidthBps !== null)
      parts.push(`≥ ${describeBandwidth(d.interconnect.minBandwidthBps)} between nodes`);
    if (d.interconnect.maxRttUs !== null)
      parts.push(`< ${describeDurationUs(d.interconnect.maxRttUs)} round trip between nodes`);
    if (d.interconnect.sameSite) parts.push('all at one site');
  }
  return parts.join(', ');
};

/** One allocation in words, as lines. */
export const explainAllocation = (a: Allocation): string[] => {
  const lines: string[] = [];
  const g = a.resources.gpus;
  const d = a.distributed;
  const head = d
    ? `${a.type === 'service' ? 'service' : 'gang'} of ${plural(a.ranks, 'rank')} (${d.framework})`
    : a.type === 'service'
      ? 'long-running service'
      : 'task';
  lines.push(`${a.name}: ${head}`);
  lines.push(`  needs: ${g ? `${describeGpus(g)}, ` : 'no GPU, '}${describePlacement(a)}`);
  if (d && g)
    lines.push(
      `  each rank: ${plural(d.gpusPerRank, 'GPU')}, ${a.resources.cpuMillicores / 1000} CPU, ${describeSize(a.resources.ramBytes)} RAM`,
    );
  else
    lines.push(
      `  each rank: ${a.resources.cpuMillicores / 1000} CPU, ${describeSize(a.resources.ramBytes)} RAM`,
    );
  if (a.resources.diskBytes > 0) lines[lines.length - 1] += `, ${describeSize(a.resources.diskBytes)} disk`;
  const runs = a.execution.image ? `${a.execution.image}` : 'a process';
  const cmd = [...(a.execution.entrypoint ?? []), ...a.execution.cmd].join(' ');
  lines.push(
    `  runs: ${runs}${cmd ? ` → ${cmd}` : ''}${d ? `; rendezvous on port ${d.rendezvousPort}` : ''}`,
  );
  const fr = a.failureRecovery;
  const recovery =
    fr.strategy === 'stay_down'
      ? 'a failure ends it'
      : `${fr.strategy === 'restart_all' ? 'restart all ranks' : 'restart the failed rank'} up to ${plural(fr.maxRestarts, 'time')}`;
  const extras = [
    fr.replaceFailedNode ? 'replacing a failed node' : undefined,
    fr.elastic ? `elastic ${fr.elastic.minNodes}–${fr.elastic.maxNodes} nodes` : undefined,
    fr.checkpointEnv ? `checkpoints in $${fr.checkpointEnv}` : undefined,
    fr.progressTimeoutMs !== null
      ? `a rank silent for ${describeDurationUs(fr.progressTimeoutMs * 1000)} is hung`
      : undefined,
  ].filter((e) => e !== undefined);
  lines.push(
    `  on failure: ${[recovery, ...extras].join(', ')}; stops after ${describeDurationUs(a.maxDurationMs * 1000)}`,
  );
  const where = describeLocation(a.location);
  if (where.length > 0) lines.push(`  where: ${where.join('; ')}`);
  if (a.ports.length > 0) {
    lines.push(
      `  serves: ${a.ports.map((p) => `${p.protocol}/${p.private}${p.public === null ? '' : ` (public ${p.public})`}`).join(', ')} as ${a.dnsName}.internal`,
    );
  }
  return lines;
};

/** The whole normalized spec in words, one paragraph per allocation. */
export const explainEnsembleSpec = (spec: NormalizedSpec): string => {
  const lines: string[] = [];
  const gpus = totalGpus(spec);
  lines.push(
    `${spec.metadata.name}: ${plural(spec.allocations.length, 'allocation')}, ${gpus === 0 ? 'no GPUs' : plural(gpus, 'GPU')} in total, at most ${describeDurationUs(spec.maxDurationMs * 1000)}${spec.subnet ? `, in subnet ${spec.subnet}` : ''}`,
  );
  if (spec.budget) {
    const b = spec.budget;
    const ceiling = escrowCeilingMinor(spec)!;
    lines.push(
      `budget: ≤ ${formatMoney(BigInt(b.maxPricePerGpuHourMinor), b.decimals)} ${b.asset} per GPU-hour; escrow up to ${formatMoney(ceiling, b.decimals)} ${b.asset}`,
    );
  }
  for (const a of spec.allocations) lines.push('', ...explainAllocation(a));
  for (const n of spec.nodes) {
    const parts = [`hosts ${n.allocations.join(', ')}`];
    if (n.peer) parts.push(`pinned to ${n.peer}`);
    parts.push(...describeLocation(n.location));
    lines.push('', `node ${n.name}: ${parts.join('; ')}`);
  }
  for (const e of spec.edgeConstraints) {
    const parts = [
      e.minBandwidthBps === null ? undefined : `≥ ${describeBandwidth(e.minBandwidthBps)}`,
      e.maxRttUs === null ? undefined : `< ${describeDurationUs(e.maxRttUs)} round trip`,
    ].filter((p) => p !== undefined);
    lines.push(`between ${e.between[0]} and ${e.between[1]}: ${parts.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
};
