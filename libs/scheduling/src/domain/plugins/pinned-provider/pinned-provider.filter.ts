import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const PINNED_PROVIDER = 'pinned-provider';
export const PinnedProviderReason = { NotPinnedProvider: 'NotPinnedProvider' } as const;

/** A node pinned to a provider (the spec's `nodes.<n>.peer`) runs there or nowhere. */
export const pinnedProviderFilter: FilterPlugin = {
  name: PINNED_PROVIDER,
  hostFilter: ({ request }) => {
    const pinned = request.pinnedProvider;
    if (pinned === null) return null;
    const other = unresolvable(
      PINNED_PROVIDER,
      PinnedProviderReason.NotPinnedProvider,
      `not provider '${pinned}'`,
    );
    return (_host, provider) => (provider.id === pinned ? SUCCESS : other);
  },
  describe: ({ request }) =>
    request.pinnedProvider === null ? null : `on provider '${request.pinnedProvider}'`,
};
