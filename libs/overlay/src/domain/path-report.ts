import type { EdgePathReport, JobPathReport, PairPath, PeerPath } from '@gpunet/contracts';
import { parseIpv4 } from './addressing';

type PairKind = PairPath['path'];

const pairKind = (ab: PeerPath | undefined, ba: PeerPath | undefined): PairKind => {
  if (!ab || !ba) return 'unknown';
  if (ab.path === 'unreachable' || ba.path === 'unreachable') return 'unreachable';
  return ab.path === ba.path ? ab.path : 'mixed';
};

const minOrNull = (values: readonly (number | null | undefined)[]): number | null => {
  const present = values.filter((v): v is number => typeof v === 'number');
  return present.length === 0 ? null : Math.min(...present);
};

/**
 * Folds the edges' path reports of one job into its report per pair of hosts (each pair once, in
 * address order). A pair is `direct` or `relayed` when both ends say so, `mixed` when they disagree,
 * `unknown` when an end has not reported. Each direction's throughput is what the receiving end
 * measured for the sender (the sender's report carries it).
 */
export const buildJobPathReport = (
  jobId: string,
  reports: readonly EdgePathReport[],
  generatedAt: string,
): JobPathReport => {
  const byAddress = new Map<string, EdgePathReport>();
  const addresses = new Set<string>();
  for (const report of reports) {
    if (report.jobId !== jobId) continue;
    byAddress.set(report.address, report);
    addresses.add(report.address);
    for (const peer of report.peers) addresses.add(peer.peerAddress);
  }
  const sorted = [...addresses].sort((x, y) => parseIpv4(x) - parseIpv4(y));
  const pairs: PairPath[] = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i]!;
      const b = sorted[j]!;
      const ab = byAddress.get(a)?.peers.find((p) => p.peerAddress === b);
      const ba = byAddress.get(b)?.peers.find((p) => p.peerAddress === a);
      pairs.push({
        a,
        b,
        path: pairKind(ab, ba),
        rttMs: minOrNull([ab?.rttMs, ba?.rttMs]),
        aToBBps: ab?.throughputBps ?? null,
        bToABps: ba?.throughputBps ?? null,
      });
    }
  }
  const count = (kind: PairKind) => pairs.filter((p) => p.path === kind).length;
  return {
    jobId,
    generatedAt,
    pairs,
    direct: count('direct'),
    relayed: count('relayed'),
    other: pairs.length - count('direct') - count('relayed'),
  };
};
