import type { StreamDefinition } from '../stream';
import { DeadLettersStream, MessageDeadLettered } from './system';
import { ExecutionStream, GatewayStream, jobMessages, jobUpcasters } from './jobs';
import { executionMessages, executionStreams } from './execution';
import { SettlementStream, settlementMessages } from './settlement';

export * from './system';
export * from './providers';
export * from './jobs';
export * from './settlement';
export * from './benchmarking';
export * from './overlay';
export * from './scheduler';
export * from './execution';

/**
 * Every message gpunet puts on the wire. Services build their registries from this list (or a
 * subset); later features add their definitions here, never in a service.
 */
export const catalog = [
  MessageDeadLettered,
  ...jobMessages,
  ...settlementMessages,
  ...executionMessages,
] as const;

/** The upcasters `catalog`'s older versions need. */
export const catalogUpcasters = [...jobUpcasters] as const;

/** Every stream gpunet declares. */
export const streams: readonly StreamDefinition[] = [
  DeadLettersStream,
  GatewayStream,
  ExecutionStream,
  SettlementStream,
  ...executionStreams,
];
