import { z } from 'zod';
import { defineEvent } from '../../message';
import { DeadLettersStream } from '../streams';

/** Published by a consumer when it gives up on a message (poison, or out of attempts). */
export const MessageDeadLettered = defineEvent({
  type: 'eventing.message-dead-lettered',
  version: 1,
  subject: 'dlq.{consumer}.v1',
  stream: DeadLettersStream.name,
  description: 'A consumer gave up on a message after its attempts, or at once when it can never succeed.',
  schema: z.strictObject({
    consumer: z.string().min(1).max(128),
    originalSubject: z.string().min(1).max(512),
    /** Sequence of the original message in its stream. */
    originalStreamSequence: z.int().min(0),
    deliveries: z.int().min(1),
    errorCode: z.string().min(1).max(128),
    errorMessage: z.string().max(4096),
    /** The original message body, base64, so that bytes that were not JSON survive too. */
    originalBody: z.base64(),
    /** The original type header when there was one. */
    originalType: z.string().max(256).nullable(),
  }),
});
