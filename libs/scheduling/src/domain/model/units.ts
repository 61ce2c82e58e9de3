/** Figures in words for reasons and explanations: `2.5 Gbit/s`, `80.2 ms`, `350 µs`. */
export const formatBps = (bps: number): string =>
  bps >= 1e9 ? `${+(bps / 1e9).toFixed(1)} Gbit/s` : `${+(bps / 1e6).toFixed(1)} Mbit/s`;

export const formatUs = (us: number): string =>
  us >= 1000 ? `${+(us / 1000).toFixed(2)} ms` : `${Math.round(us)} µs`;
