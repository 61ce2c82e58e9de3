import type { ScorePlugin } from '../../framework/plugin';

export const INTRA_HOST_BANDWIDTH = 'intra-host-bandwidth';

/** NVLink/xGMI hosts before PCIe ones, for gangs that share a host. */
export const intraHostBandwidthScore: ScorePlugin = {
  name: INTRA_HOST_BANDWIDTH,
  better: 'higher',
  score: (_ctx, h) => h.host.intraHost.bandwidthBps,
};
