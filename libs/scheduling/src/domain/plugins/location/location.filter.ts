import type { FilterPlugin } from '../../framework/plugin';
import type { LocationMatch } from '../../model/request';
import type { ProviderLocation } from '../../model/snapshot-input';
import { SUCCESS, unresolvable } from '../../model/status';

export const LOCATION = 'location';
export const LocationReason = {
  LocationNotAccepted: 'LocationNotAccepted',
  LocationRejected: 'LocationRejected',
} as const;

const FIELDS = ['continent', 'country', 'city', 'asn', 'isp'] as const;

/** Whether a provider's location matches an entry: every field the entry sets is equal. */
export const matchesLocation = (where: ProviderLocation, m: LocationMatch): boolean =>
  FIELDS.every((f) => m[f] === undefined || m[f] === null || m[f] === where[f]);

export const describeLocation = (m: LocationMatch): string =>
  FIELDS.filter((f) => m[f] !== undefined && m[f] !== null)
    .map((f) => (f === 'asn' ? `AS${m.asn}` : String(m[f])))
    .join('/');

/** Accept/reject rules on the provider's location (continent, country, city, ASN, ISP). */
export const locationFilter: FilterPlugin = {
  name: LOCATION,
  hostFilter: ({ request }) => {
    const { accept, reject } = request.location;
    if (accept.length === 0 && reject.length === 0) return null;
    const notAccepted = unresolvable(
      LOCATION,
      LocationReason.LocationNotAccepted,
      `provider is not in ${accept.map(describeLocation).join(' | ')}`,
    );
    const rejected = unresolvable(
      LOCATION,
      LocationReason.LocationRejected,
      'provider is in a rejected location',
    );
    return (_host, provider) => {
      if (accept.length > 0 && !accept.some((m) => matchesLocation(provider.location, m))) return notAccepted;
      if (reject.some((m) => matchesLocation(provider.location, m))) return rejected;
      return SUCCESS;
    };
  },
  describe: ({ request }) => {
    const { accept, reject } = request.location;
    const parts = [
      accept.length > 0 ? `in ${accept.map(describeLocation).join(' | ')}` : null,
      reject.length > 0 ? `not in ${reject.map(describeLocation).join(' | ')}` : null,
    ].filter((p) => p !== null);
    return parts.length === 0 ? null : parts.join(', ');
  },
};
