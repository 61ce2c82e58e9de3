import { MessageDeadLettered } from './system';
import { jobMessages, jobUpcasters } from './jobs';
import { executionMessages } from './execution';
import { settlementMessages } from './settlement';

export {
  AssetSchema,
  EdgeIdSchema,
  EntityIdSchema,
  FaultKindSchema,
  GpuClassSchema,
  MinorUnitsSchema,
  SignedMinorUnitsSchema,
} from './primitives';
export * from './streams';
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
