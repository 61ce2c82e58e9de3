import { UnsignedReportError } from '../../errors';
import { defineEvent } from '../../message';
import { defineUpcaster } from '../../registry';
import { signedEdgeReportFields } from '../primitives';
import { EdgeRanksStream } from '../streams';
import { RankStatusReportedV1 } from './edge-rank-status.v1';

/**
 * A rank's lifecycle on its edge: `running` when it started (and every heartbeat period while it
 * runs), `exited` once with its exit code or signal. Signed by the edge (`signedEdgeReportFields`,
 * ADR 0030): its `wallSeconds` is a claim execution pays from, so execution verifies the signature
 * and accepts a status only from the edge the rank was placed on. `sequence` grows with every status
 * the edge signs; execution orders statuses by attempt and state, not by it.
 */
export const RankStatusReported = defineEvent({
  type: 'edge.rank-status',
  version: 2,
  subject: 'edge.{edgeId}.rank-status.v2',
  stream: EdgeRanksStream.name,
  description: 'A rank started, is still running, or exited (code or signal), as its edge saw it. Signed.',
  schema: RankStatusReportedV1.schema.omit({ edgeId: true }).extend(signedEdgeReportFields),
});

/** A v1 status carries no signature: it is refused (dead-lettered), never read as v2. */
export const rankStatusV1ToV2 = defineUpcaster({
  from: RankStatusReportedV1,
  to: RankStatusReported,
  upcast: (data) => {
    throw new UnsignedReportError(
      `edge.rank-status v1 from ${data.edgeId} is unsigned: execution reads signed statuses (v2) only`,
    );
  },
});
