import type { GangFilterPlugin } from '../../framework/plugin';
import { pluginError, SUCCESS } from '../../model/status';

export const INTERCONNECT = 'interconnect';
export const InterconnectReason = {
  BandwidthTooLow: 'BandwidthTooLow',
  RttTooHigh: 'RttTooHigh',
  NotSameSite: 'NotSameSite',
} as const;

/** Every pair of chosen nodes meets the minimum bandwidth and maximum RTT; one site when asked. */
export const interconnectGangFilter: GangFilterPlugin = {
  name: INTERCONNECT,
  filterGang: ({ request }, gang) => {
    const ic = request.interconnect;
    if (gang.nodes.length < 2) return SUCCESS;
    if (ic.sameSite && new Set(gang.nodes.map((n) => n.host.siteIndex)).size > 1) {
      return pluginError(INTERCONNECT, InterconnectReason.NotSameSite, 'gang spans several sites');
    }
    const bw = gang.network.minPairBandwidthBps;
    if (ic.minBandwidthBps !== null && bw !== null && bw < ic.minBandwidthBps) {
      return pluginError(
        INTERCONNECT,
        InterconnectReason.BandwidthTooLow,
        `a pair has ${bw} bit/s < ${ic.minBandwidthBps}`,
      );
    }
    const rtt = gang.network.maxPairRttUs;
    if (ic.maxRttUs !== null && rtt !== null && rtt > ic.maxRttUs) {
      return pluginError(
        INTERCONNECT,
        InterconnectReason.RttTooHigh,
        `a pair has RTT ${rtt} µs > ${ic.maxRttUs}`,
      );
    }
    return SUCCESS;
  },
};
