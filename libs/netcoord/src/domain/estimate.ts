import { type Coordinate, predictRtt } from './coordinate';
import { pairKey } from './peer-sampling';

export interface RttEstimate {
  readonly rttUs: number;
  /** `measured`: a probe of this very pair; `coordinates`: predicted from both hosts' coordinates. */
  readonly source: 'measured' | 'coordinates';
}

/**
 * The network estimate the scheduler reads: a measured link wins (the minimum RTT of the pair's
 * probes), otherwise the coordinates predict; null when a host has neither.
 */
export const estimateRtt = (
  a: string,
  b: string,
  coordinates: ReadonlyMap<string, Coordinate>,
  measured: ReadonlyMap<string, number> = new Map(),
): RttEstimate | null => {
  if (a === b) return { rttUs: 0, source: 'measured' };
  const direct = measured.get(pairKey(a, b));
  if (direct !== undefined) return { rttUs: direct, source: 'measured' };
  const ca = coordinates.get(a);
  const cb = coordinates.get(b);
  if (ca === undefined || cb === undefined) return null;
  return { rttUs: predictRtt(ca, cb), source: 'coordinates' };
};

/** The lowest RTT per unordered pair over repeated probes (queueing only ever adds delay). */
export const minRttByPair = (
  samples: readonly { readonly a: string; readonly b: string; readonly rttUs: number }[],
): Map<string, number> => {
  const out = new Map<string, number>();
  for (const s of samples) {
    const key = pairKey(s.a, s.b);
    const previous = out.get(key);
    if (previous === undefined || s.rttUs < previous) out.set(key, s.rttUs);
  }
  return out;
};
