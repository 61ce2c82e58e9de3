import {
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  DiscoveryStream,
  EdgeRanksStream,
  EscrowExhausted,
  executionMessages,
  ExecutionStream,
  GatewayStream,
  JobPlaced,
  jobMessages,
  MessageDeadLettered,
  type MessageRegistry,
  OverlayPathsReported,
  ProviderInventoryChanged,
  ProviderOffline,
  ProviderOnline,
  ProviderRegistered,
  ProviderReservationsChanged,
  SchedulerStream,
  SettlementStream,
  type StreamDefinition,
} from '@gpunet/contracts';

/** Every message execution reads or writes. */
export const executionRegistry = (): MessageRegistry =>
  createRegistry(
    [
      MessageDeadLettered,
      ...jobMessages,
      ...executionMessages,
      JobPlaced,
      ProviderRegistered,
      ProviderInventoryChanged,
      ProviderReservationsChanged,
      ProviderOffline,
      ProviderOnline,
      EscrowExhausted,
      OverlayPathsReported,
    ],
    catalogUpcasters,
  );

/** The streams execution consumes (GATEWAY, SCHEDULER, EDGE_RANKS, DISCOVERY, SETTLEMENT) and writes. */
export const executionStreams: readonly StreamDefinition[] = [
  DeadLettersStream,
  GatewayStream,
  SchedulerStream,
  EdgeRanksStream,
  DiscoveryStream,
  SettlementStream,
  ExecutionStream,
];
