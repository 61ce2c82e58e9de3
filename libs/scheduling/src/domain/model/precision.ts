/** Numeric precisions GPUs are measured in (the same list as the ensemble spec's `min_tflops`). */
export const PRECISIONS = ['fp64', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8', 'int8'] as const;
export type Precision = (typeof PRECISIONS)[number];
