import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';
import { gpuPrice } from '../../objective/price';

export const PROVIDER_POLICY = 'provider-policy';
export const ProviderPolicyReason = {
  /** The provider's per-job GPU cap is below what one node of this gang needs. */
  PerJobCapTooSmall: 'PerJobCapTooSmall',
  /** The provider has no price for the GPU's model: it does not rent it out. */
  ModelNotOffered: 'ModelNotOffered',
} as const;

/** The provider's own rules: how many GPUs it gives one job, and which models it rents out. */
export const providerPolicyFilter: FilterPlugin = {
  name: PROVIDER_POLICY,
  hostFilter: ({ request }) => {
    const need = Math.max(request.gpusPerNode?.min ?? 1, request.gpusPerRank, 1);
    const tooSmall = unresolvable(
      PROVIDER_POLICY,
      ProviderPolicyReason.PerJobCapTooSmall,
      `provider gives a job fewer than ${need} GPUs`,
    );
    return (_host, provider) => {
      const cap = provider.policy.maxGpusPerJob;
      return cap === null || cap >= need ? SUCCESS : tooSmall;
    };
  },
  gpuFilter: () => {
    const notOffered = unresolvable(
      PROVIDER_POLICY,
      ProviderPolicyReason.ModelNotOffered,
      'provider does not rent out this model',
    );
    return (gpu, _host, provider) => (gpuPrice(gpu, provider) === null ? notOffered : SUCCESS);
  },
  describe: () => null,
};
