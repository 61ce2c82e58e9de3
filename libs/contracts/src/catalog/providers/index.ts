/*
 * Providers and their edges. One provider host runs one `provider-edge`; its identity is an ed25519
 * NATS user nkey and its edge id *is* that public key, so a message's subject, the NATS credentials
 * allowed to publish on it and the key that signed it name the same thing.
 *
 * Edge-originated messages travel on `edge.{edgeId}.…` (NATS permissions restrict every edge to its
 * own), commands to an edge on `cmd.edge.{edgeId}.…`. Discovery consumes the edge messages, keeps its
 * own event-sourced provider aggregate and publishes `provider.*` on `discovery.provider.…`.
 */

// Values
export { availableUntil, minuteOfWeek, weeklyCoverage } from './availability';
export { modelMatches, modelWords } from './gpu-model';
export { type Host, hostIdentity, HostSchema } from './host.schemas';
export {
  type EdgeIsolation,
  EdgeIsolationSchema,
  ISOLATION_LEVELS,
  isolationAtLeast,
  type IsolationLevel,
  IsolationLevelSchema,
  UNREPORTED_ISOLATION,
} from './isolation.schemas';
export {
  ComputeCapabilityValueSchema,
  DetectionBackendSchema,
  type Gpu,
  type GpuLink,
  GpuLinkSchema,
  GpuSchema,
  type Inventory,
  InventorySchema,
  MigDeviceSchema,
} from './inventory.schemas';
export {
  type AvailabilityWindow,
  AvailabilityWindowSchema,
  type PolicySummary,
  PolicySummarySchema,
} from './policy.schemas';
export { type EdgeReservation, EdgeReservationSchema } from './reservation.schemas';

// Edge → control plane (signed, except the heartbeat)
export { EdgeDeregistered } from './edge-deregistered.v1';
export { EdgeHeartbeat } from './edge-heartbeat.v1';
export { EdgeInventoryReported } from './edge-inventory-reported.v1';
export { EdgePolicyReported } from './edge-policy-reported.v1';
export { EdgeRegistered } from './edge-registered.v1';
export { EdgeReservationsReported } from './edge-reservations-reported.v1';

// Control plane → edge (request/reply)
export { ReleaseOnEdge, type ReleaseReply, ReleaseReplySchema } from './edge-release.v1';
export {
  type DeclineReason,
  DeclineReasonSchema,
  type ReservationReply,
  ReservationReplySchema,
  ReserveOnEdge,
} from './edge-reserve.v1';

// Discovery's provider aggregate
export { ProviderDeregistered } from './provider-deregistered.v1';
export { ProviderInventoryChanged } from './provider-inventory-changed.v1';
export { ProviderOffline } from './provider-offline.v1';
export { ProviderOnline } from './provider-online.v1';
export { ProviderPolicyChanged } from './provider-policy-changed.v1';
export { ProviderRegistered } from './provider-registered.v1';
export { ProviderReservationsChanged } from './provider-reservations-changed.v1';

// The candidate query (the scheduler's input)
export {
  type CandidateGpu,
  CandidateGpuSchema,
  type CandidateProvider,
  CandidateProviderSchema,
  FindCandidates,
} from './discovery-candidates.v1';
export { GetProvider, type ProviderView, ProviderViewSchema } from './discovery-provider.v1';

export { providerCatalog } from './providers.messages';
