import { z } from 'zod';
import { text } from '../primitives';

/** One comparison of a claim with a measurement. */
export const ClaimCheckSchema = z.strictObject({
  /** The GPU (inventory uuid) or `host` for checks about the host as a whole. */
  subject: text(128),
  /** What the inventory claims: the GPU model name, or a count. */
  claimed: text(256),
  /** The reference entry used (`H100 SXM`); null when the model is not in the table. */
  reference: z.string().max(64).nullable(),
  metric: z.enum([
    'matmul-fp32-tflops',
    'matmul-tf32-tflops',
    'matmul-fp16-tflops',
    'matmul-bf16-tflops',
    'memory-bandwidth-gbps',
    'memory-bytes',
    'device-count',
    'device-present',
  ]),
  /** The published figure (peak) or the claimed quantity. */
  published: z.number().min(0).nullable(),
  /** Lowest acceptable measurement: published × the model's tolerance floor. */
  expectedMin: z.number().min(0).nullable(),
  measured: z.number().min(0).nullable(),
  /** measured / published; null when either is missing. */
  ratio: z.number().min(0).nullable(),
  verdict: z.enum(['ok', 'below-tolerance', 'missing', 'unverifiable']),
});
export type ClaimCheck = z.infer<typeof ClaimCheckSchema>;
