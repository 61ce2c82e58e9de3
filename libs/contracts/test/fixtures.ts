import { z } from 'zod';
import { defineCommand, defineEvent, defineUpcaster } from '../src';

export const WidgetCreatedV1 = defineEvent({
  type: 'widget.created',
  version: 1,
  subject: 'test.widget.created.v1',
  stream: 'TEST',
  description: 'test fixture',
  schema: z.strictObject({
    name: z.string().min(1).max(20),
    gpus: z.array(z.strictObject({ uuid: z.string().startsWith('GPU-') })),
  }),
});

export const WidgetCreatedV2 = defineEvent({
  type: 'widget.created',
  version: 2,
  subject: 'test.widget.created.v2',
  stream: 'TEST',
  description: 'test fixture: v2 adds an owner',
  schema: z.strictObject({
    name: z.string().min(1).max(20),
    owner: z.string(),
    gpus: z.array(z.strictObject({ uuid: z.string().startsWith('GPU-') })),
  }),
});

export const WidgetV1ToV2 = defineUpcaster({
  from: WidgetCreatedV1,
  to: WidgetCreatedV2,
  upcast: (d) => ({ ...d, owner: 'unknown' }),
});

export const StartRank = defineCommand({
  type: 'edge.start-rank',
  version: 1,
  subject: 'cmd.edge.{edgeId}.start-rank.v1',
  stream: 'COMMANDS',
  description: 'test fixture',
  schema: z.strictObject({ rank: z.int().min(0) }),
});
