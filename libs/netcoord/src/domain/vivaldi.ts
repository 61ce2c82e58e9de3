import { type Coordinate, predictRtt } from './coordinate';
import { type Rng, shuffled } from './rng';
import { median, relativeError } from './stats';

/** A host's coordinate and Vivaldi's running estimate of its relative error (1 = knows nothing). */
export interface VivaldiState {
  readonly coord: Coordinate;
  readonly error: number;
}

export interface VivaldiParams {
  /** Step size constant c_c: how far one sample may move a coordinate. Dabek et al.: 0.25. */
  readonly cc: number;
  /** Error smoothing constant c_e. Dabek et al.: 0.25. */
  readonly ce: number;
  /** Heights never fall below this (same unit as RTTs). */
  readonly minHeight: number;
}

export const DEFAULT_VIVALDI: VivaldiParams = { cc: 0.25, ce: 0.25, minHeight: 0 };

export const freshState = (coord: Coordinate): VivaldiState => ({ coord, error: 1 });

/**
 * One Vivaldi step (Dabek et al., Fig. 3, with height vectors): `self` moves along the line to `peer`
 * in proportion to the prediction error, weighted by how sure `self` is compared with `peer`. Hosts
 * that sit on top of each other are pushed apart in a random direction (`rng`), which is what breaks
 * the symmetry of a fresh system.
 */
export const vivaldiUpdate = (
  self: VivaldiState,
  peer: VivaldiState,
  rtt: number,
  rng: Rng,
  params: VivaldiParams = DEFAULT_VIVALDI,
): VivaldiState => {
  if (!(rtt > 0) || !Number.isFinite(rtt)) return self;
  const total = self.error + peer.error;
  const w = total > 0 ? self.error / total : 0.5;
  const predicted = predictRtt(self.coord, peer.coord);
  const sampleError = Math.abs(predicted - rtt) / rtt;
  const error = Math.min(1, sampleError * params.ce * w + self.error * (1 - params.ce * w));
  const force = params.cc * w * (rtt - predicted);
  const dx = self.coord.x - peer.coord.x;
  const dy = self.coord.y - peer.coord.y;
  const planar = Math.hypot(dx, dy);
  let ux: number;
  let uy: number;
  let uh: number;
  if (planar < 1e-9) {
    if (force > 0) {
      // Too close: apart, in a random direction (moving in the plane is the only way to grow the distance).
      const angle = rng() * 2 * Math.PI;
      ux = Math.cos(angle);
      uy = Math.sin(angle);
      uh = 0;
    } else {
      // Too far while on one point: only the heights can shrink.
      ux = 0;
      uy = 0;
      uh = 1;
    }
  } else {
    // The height vector [x_i − x_j, h_i + h_j] and its norm ‖·‖ + h_i + h_j.
    const norm = planar + self.coord.height + peer.coord.height;
    ux = dx / norm;
    uy = dy / norm;
    uh = (self.coord.height + peer.coord.height) / norm;
  }
  return {
    coord: {
      x: self.coord.x + force * ux,
      y: self.coord.y + force * uy,
      height: Math.max(params.minHeight, self.coord.height + force * uh),
    },
    error,
  };
};

/** One measured RTT between two hosts (use the minimum of repeated probes: queueing only adds). */
export interface RttSample {
  readonly a: string;
  readonly b: string;
  readonly rtt: number;
}

export interface FitOptions {
  readonly rng: Rng;
  /** Passes over all samples per restart. Default 300. */
  readonly rounds?: number;
  /**
   * Independent starts; the one that fits the samples best wins. Default 24 up to 500 samples, else 6:
   * with few samples per host a single start can settle in a local minimum (a folded layout).
   */
  readonly restarts?: number;
  /** Coordinates to start from (the previous fit): the first restart starts there. */
  readonly initial?: ReadonlyMap<string, Coordinate>;
  readonly params?: Partial<VivaldiParams>;
}

export interface FitResult {
  readonly states: ReadonlyMap<string, VivaldiState>;
  /** Median relative error of the fitted coordinates over the samples themselves. */
  readonly sampleError: number;
}

/**
 * Vivaldi run centrally: the benchmarking service holds every measured sample, so instead of one
 * update per probe as it arrives (the decentralised algorithm), it replays all samples in random order
 * for `rounds` passes, with a step that shrinks from c_c towards zero (annealing), so the springs
 * settle instead of oscillating. Cost: restarts × rounds × samples — linear in the probes, which are
 * O(n·k). Deterministic for a given `rng`.
 */
export const fitCoordinates = (
  hosts: readonly string[],
  samples: readonly RttSample[],
  options: FitOptions,
): FitResult => {
  const params = { ...DEFAULT_VIVALDI, ...options.params };
  const rounds = options.rounds ?? 300;
  const usable = samples.filter((s) => s.a !== s.b && s.rtt > 0 && Number.isFinite(s.rtt));
  const restarts = Math.max(1, options.restarts ?? (usable.length <= 500 ? 24 : 6));
  const scale = usable.length > 0 ? median(usable.map((s) => s.rtt)) : 1;
  let best: FitResult | undefined;
  for (let restart = 0; restart < restarts; restart++) {
    const states = new Map<string, VivaldiState>();
    for (const host of hosts) {
      const start = restart === 0 ? options.initial?.get(host) : undefined;
      states.set(
        host,
        freshState(
          start ?? {
            x: (options.rng() - 0.5) * scale,
            y: (options.rng() - 0.5) * scale,
            height: params.minHeight,
          },
        ),
      );
    }
    for (const s of usable) {
      if (!states.has(s.a)) states.set(s.a, freshState({ x: 0, y: 0, height: params.minHeight }));
      if (!states.has(s.b)) states.set(s.b, freshState({ x: 0, y: 0, height: params.minHeight }));
    }
    for (let round = 0; round < rounds; round++) {
      const cc = params.cc * (1 - round / rounds) + 0.002;
      const step = { ...params, cc };
      for (const s of shuffled(usable, options.rng)) {
        const a = states.get(s.a)!;
        const b = states.get(s.b)!;
        states.set(s.a, vivaldiUpdate(a, b, s.rtt, options.rng, step));
        states.set(s.b, vivaldiUpdate(b, a, s.rtt, options.rng, step));
      }
    }
    const sampleError =
      usable.length === 0
        ? 0
        : median(
            usable.map((s) =>
              relativeError(predictRtt(states.get(s.a)!.coord, states.get(s.b)!.coord), s.rtt),
            ),
          );
    if (best === undefined || sampleError < best.sampleError) best = { states, sampleError };
  }
  return best!;
};
