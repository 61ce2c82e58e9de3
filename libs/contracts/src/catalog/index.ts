import type { StreamDefinition } from '../stream';
import { DeadLettersStream, MessageDeadLettered } from './system';

export * from './system';

/**
 * Every message gpunet puts on the wire. Services build their registries from this list (or a
 * subset); later features add their definitions here, never in a service.
 */
export const catalog = [MessageDeadLettered] as const;

/** Every stream gpunet declares. */
export const streams: readonly StreamDefinition[] = [DeadLettersStream];
