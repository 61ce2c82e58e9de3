import {
  catalog,
  catalogUpcasters,
  createRegistry,
  DeadLettersStream,
  ExecutionStream,
  GatewayStream,
  JobLogsStream,
  type MessageRegistry,
  OverlayPathsReported,
  schedulerMessages,
  SchedulerStream,
  SettlementStream,
  type StreamDefinition,
} from '@gpunet/contracts';

/** Every message the gateway reads or writes. */
export const gatewayRegistry = (): MessageRegistry =>
  createRegistry([...catalog, ...schedulerMessages, OverlayPathsReported], catalogUpcasters);

/** Streams the gateway declares (idempotent) so that it can start before the services it reads. */
export const GATEWAY_STREAMS: readonly StreamDefinition[] = [
  DeadLettersStream,
  GatewayStream,
  SettlementStream,
  SchedulerStream,
  ExecutionStream,
  JobLogsStream,
];
