import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const SUBNET = 'subnet';
export const SubnetReason = { NotInSubnet: 'NotInSubnet' } as const;

/** A job in a subnet runs only on that subnet's members. */
export const subnetFilter: FilterPlugin = {
  name: SUBNET,
  hostFilter: ({ request }) => {
    const subnet = request.subnet;
    if (subnet === null) return null;
    const outside = unresolvable(SUBNET, SubnetReason.NotInSubnet, `provider is not in subnet '${subnet}'`);
    return (_host, provider) => (provider.policy.subnets.includes(subnet) ? SUCCESS : outside);
  },
  describe: ({ request }) => (request.subnet === null ? null : `in subnet '${request.subnet}'`),
};
