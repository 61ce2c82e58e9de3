import { type FilterPlugin, SUCCESS, unresolvable } from '../../src';

export const AVOID_PROVIDERS = 'avoid-providers';
export const AvoidProvidersReason = { ProviderAvoided: 'ProviderAvoided' } as const;

/** A subnet's deny-list: providers it will not place work on. */
export const avoidProviders = (denied: readonly string[]): FilterPlugin => ({
  name: AVOID_PROVIDERS,
  hostFilter: () => {
    if (denied.length === 0) return null;
    const avoided = unresolvable(
      AVOID_PROVIDERS,
      AvoidProvidersReason.ProviderAvoided,
      'provider is on the deny-list',
    );
    return (_host, provider) => (denied.includes(provider.id) ? avoided : SUCCESS);
  },
  describe: () => (denied.length === 0 ? null : `not on ${denied.join(', ')}`),
});
