import { z } from 'zod';
import { EdgeIdSchema } from '../primitives';

/** A measured rate (throughput, bandwidth, FLOPS) in the unit its field's name says. */
export const RateSchema = z.number().min(0).max(1e7);

/** A request id: one subject token's worth of characters. */
export const RequestIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 _ -');

/** The suites a benchmark may run; an edge skips what its devices cannot do and says so in `notes`. */
export const BENCHMARK_SUITES = ['matmul', 'memory', 'host-device', 'peer'] as const;
export type BenchmarkSuite = (typeof BENCHMARK_SUITES)[number];

/** Why benchmarking asks for a run: the first, a profile about to expire, new hardware, a random check. */
export const BenchmarkReasonSchema = z.enum([
  'initial',
  'expiring',
  'inventory-changed',
  'spot-check',
  'manual',
]);
export type BenchmarkReason = z.infer<typeof BenchmarkReasonSchema>;

/** The request fields of the queries paged by provider id. */
export const providerPageRequest = {
  /** Only these providers; empty: all. */
  providerIds: z.array(EdgeIdSchema).max(1000).default([]),
  /** `nextCursor` of the previous page. */
  cursor: z.string().max(128).nullable().default(null),
  limit: z.int().min(1).max(1000).default(200),
};
