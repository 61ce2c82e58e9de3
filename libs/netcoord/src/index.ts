// Network coordinates and probe planning for gpunet's benchmarking: pure, deterministic for a
// given seed, no I/O. See docs/benchmarking.md.
export { type Coordinate, ORIGIN, predictRtt } from './domain/coordinate';
export { estimateRtt, minRttByPair, type RttEstimate } from './domain/estimate';
export {
  pairKey,
  type ProbePair,
  probeRounds,
  samplePeers,
  type SampleOptions,
} from './domain/peer-sampling';
export { mulberry32, type Rng, seedOf, shuffled } from './domain/rng';
export { DEFAULT_LAN_RTT_US, detectSites, type MeasuredRtt } from './domain/same-site';
export { median, percentile, relativeError } from './domain/stats';
export {
  DEFAULT_VIVALDI,
  fitCoordinates,
  type FitOptions,
  type FitResult,
  freshState,
  type RttSample,
  vivaldiUpdate,
  type VivaldiParams,
  type VivaldiState,
} from './domain/vivaldi';
