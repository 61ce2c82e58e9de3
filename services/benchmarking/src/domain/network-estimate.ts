import {
  type Coordinate,
  detectSites,
  fitCoordinates,
  minRttByPair,
  type Rng,
  type VivaldiState,
} from '@gpunet/netcoord';

/** A measured link as the projection holds it (µs). */
export interface LinkRow {
  readonly a: string;
  readonly b: string;
  readonly rttUs: number;
}

export interface HostCoordinate extends Coordinate {
  readonly hostId: string;
  readonly error: number;
  readonly siteId: string;
}

export interface NetworkEstimateOptions {
  readonly rng: Rng;
  /** The previous coordinates: the fit starts there, so coordinates move smoothly between cycles. */
  readonly previous?: ReadonlyMap<string, Coordinate>;
  /** Same-site threshold, µs. */
  readonly lanRttUs: number;
  readonly rounds?: number;
  readonly restarts?: number;
}

/**
 * The network estimate from the links measured so far: Vivaldi coordinates for every host (fitted
 * over the minimum RTT of each pair) and same-site groups. Pure: the service calls it after each
 * batch of measurements and stores the result in its projection.
 */
export const estimateNetwork = (
  hosts: readonly string[],
  links: readonly LinkRow[],
  options: NetworkEstimateOptions,
): HostCoordinate[] => {
  const best = minRttByPair(links);
  const samples = [...best].map(([key, rtt]) => {
    const [a, b] = key.split('|') as [string, string];
    return { a, b, rtt };
  });
  const all = [...new Set([...hosts, ...samples.flatMap((s) => [s.a, s.b])])].sort();
  const fit = fitCoordinates(all, samples, {
    rng: options.rng,
    ...(options.previous ? { initial: options.previous } : {}),
    ...(options.rounds !== undefined ? { rounds: options.rounds } : {}),
    ...(options.restarts !== undefined ? { restarts: options.restarts } : {}),
  });
  const sites = detectSites(
    all,
    samples.map((s) => ({ a: s.a, b: s.b, rttUs: s.rtt })),
    options.lanRttUs,
  );
  return all.map((hostId) => {
    const state: VivaldiState = fit.states.get(hostId)!;
    return {
      hostId,
      x: state.coord.x,
      y: state.coord.y,
      height: state.coord.height,
      error: state.error,
      siteId: sites.get(hostId) ?? hostId,
    };
  });
};

/** How far a coordinate may move before consumers hear of it: a change below these is noise. */
export const COORDINATE_CHANGE = {
  /** Estimated RTT between the old and the new position (plane distance + both heights' change), µs. */
  movedUs: 500,
  /** Change of the relative error. */
  error: 0.05,
} as const;

/**
 * The hosts of a fit worth announcing: new ones, those whose same-site group changed, and those
 * whose coordinate moved or whose error changed by at least `COORDINATE_CHANGE`. A refit after
 * every link report nudges every coordinate a little; announcing only real changes keeps
 * `network.coordinates.refitted` small.
 */
export const changedCoordinates = (
  previous: ReadonlyMap<string, Omit<HostCoordinate, 'hostId'>>,
  next: readonly HostCoordinate[],
): HostCoordinate[] =>
  next.filter((c) => {
    const p = previous.get(c.hostId);
    if (p === undefined || p.siteId !== c.siteId) return true;
    const moved = Math.hypot(c.x - p.x, c.y - p.y) + Math.abs(c.height - p.height);
    return moved >= COORDINATE_CHANGE.movedUs || Math.abs(c.error - p.error) >= COORDINATE_CHANGE.error;
  });
