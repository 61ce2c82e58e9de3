import { executionMessages, executionUpcasters } from './execution';
import { jobMessages, jobUpcasters } from './jobs';
import { settlementMessages } from './settlement';
import { MessageDeadLettered } from './system';

/**
 * Every message gpunet puts on the wire. Services build their registries from this list (or a
 * subset); a new message is defined here, in its context's folder, never in a service.
 */
export const catalog = [
  MessageDeadLettered,
  ...jobMessages,
  ...settlementMessages,
  ...executionMessages,
] as const;

/** The upcasters `catalog`'s older versions need. */
export const catalogUpcasters = [...jobUpcasters, ...executionUpcasters] as const;
