import { EdgeDeregistered } from './edge-deregistered.v1';
import { EdgeHeartbeat } from './edge-heartbeat.v1';
import { EdgeInventoryReported } from './edge-inventory-reported.v1';
import { EdgePolicyReported } from './edge-policy-reported.v1';
import { EdgeRegistered } from './edge-registered.v1';
import { ReleaseOnEdge } from './edge-release.v1';
import { EdgeReservationsReported } from './edge-reservations-reported.v1';
import { ReserveOnEdge } from './edge-reserve.v1';
import { ProviderDeregistered } from './provider-deregistered.v1';
import { ProviderInventoryChanged } from './provider-inventory-changed.v1';
import { ProviderOffline } from './provider-offline.v1';
import { ProviderOnline } from './provider-online.v1';
import { ProviderPolicyChanged } from './provider-policy-changed.v1';
import { ProviderRegistered } from './provider-registered.v1';
import { ProviderReservationsChanged } from './provider-reservations-changed.v1';

/** Every provider message, for registries. */
export const providerCatalog = [
  EdgeRegistered,
  EdgeInventoryReported,
  EdgePolicyReported,
  EdgeReservationsReported,
  EdgeDeregistered,
  EdgeHeartbeat,
  ReserveOnEdge,
  ReleaseOnEdge,
  ProviderRegistered,
  ProviderInventoryChanged,
  ProviderPolicyChanged,
  ProviderReservationsChanged,
  ProviderOnline,
  ProviderOffline,
  ProviderDeregistered,
] as const;
