import type { FilterPlugin } from '../../framework/plugin';
import { SUCCESS, unresolvable } from '../../model/status';

export const VENDOR = 'vendor';
export const VendorReason = { VendorMismatch: 'VendorMismatch' } as const;

export const vendorFilter: FilterPlugin = {
  name: VENDOR,
  gpuFilter: ({ request }) => {
    const vendor = request.vendor;
    if (vendor === 'any') return null;
    const other = unresolvable(VENDOR, VendorReason.VendorMismatch, `GPU is not ${vendor}`);
    return (gpu) => (gpu.vendor === vendor ? SUCCESS : other);
  },
  describe: ({ request }) => (request.vendor === 'any' ? null : request.vendor),
};
