import { describe, expectTypeOf, it } from 'vitest';
import { buildEnvelope, type EnvelopeOf, type PayloadOf, type SubjectTokens } from '../src';
import { StartRank, WidgetCreatedV2 } from './fixtures';

// These tests are checked by the compiler (the typecheck target); vitest runs them as no-ops.
describe('type-level contracts', () => {
  it('infers payload types from the schema', () => {
    expectTypeOf<PayloadOf<typeof WidgetCreatedV2>>().toEqualTypeOf<{
      name: string;
      owner: string;
      gpus: { uuid: string }[];
    }>();
    expectTypeOf<EnvelopeOf<typeof WidgetCreatedV2>['type']>().toEqualTypeOf<'widget.created'>();
  });

  it('names subject tokens', () => {
    expectTypeOf<SubjectTokens<'cmd.edge.{edgeId}.x.{jobId}.v1'>>().toEqualTypeOf<'edgeId' | 'jobId'>();
  });

  it('refuses wrong payloads and missing subject tokens at compile time', () => {
    const compileOnly = (): void => {
      // @ts-expect-error owner is required
      buildEnvelope(WidgetCreatedV2, { name: 'a', gpus: [] }, { streamId: 's' });
      // @ts-expect-error gpus must be objects with uuid
      buildEnvelope(WidgetCreatedV2, { name: 'a', owner: 'o', gpus: ['GPU-1'] }, { streamId: 's' });
      // @ts-expect-error rank must be a number
      buildEnvelope(StartRank, { rank: '0' }, { streamId: 's' });
      // @ts-expect-error the subject needs edgeId
      StartRank.subject({ jobId: 'j' });
    };
    expectTypeOf(compileOnly).toBeFunction();
  });
});
