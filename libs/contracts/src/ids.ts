import { v7 } from 'uuid';
import { z } from 'zod';

/** A new UUIDv7: time-ordered, so event ids sort roughly by creation and index well. */
export const newEventId = (): string => v7();

export const EventIdSchema = z.uuid({ version: 'v7', error: 'must be a UUIDv7' });
