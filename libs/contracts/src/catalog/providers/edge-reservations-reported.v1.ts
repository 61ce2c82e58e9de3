import { z } from 'zod';
import { defineEvent } from '../../message';
import { signedEdgeReportFields } from '../primitives';
import { EdgeStream } from '../streams';
import { EdgeReservationSchema } from './reservation.schemas';

export const EdgeReservationsReported = defineEvent({
  type: 'edge.reservations-reported',
  version: 1,
  subject: 'edge.{edgeId}.reservations-reported.v1',
  stream: EdgeStream.name,
  description: "The edge's reservations after one was accepted, released or expired. Signed.",
  schema: z.strictObject({ ...signedEdgeReportFields, reservations: z.array(EdgeReservationSchema).max(64) }),
});
