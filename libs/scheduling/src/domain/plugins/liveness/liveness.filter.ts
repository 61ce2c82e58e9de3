import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unschedulable } from '../../model/status';

export const LIVENESS = 'liveness';
export const LivenessReason = { ProviderNotOnline: 'ProviderNotOnline' } as const;

/** Only providers whose edge is online (heartbeating, not draining) take new work. */
export const livenessFilter: FilterPlugin = {
  name: LIVENESS,
  hostFilter: () => {
    const offline = unschedulable(LIVENESS, LivenessReason.ProviderNotOnline, 'provider is not online');
    return (_host, provider) => (provider.policy.liveness === 'online' ? SUCCESS : offline);
  },
  describe: () => null,
};
