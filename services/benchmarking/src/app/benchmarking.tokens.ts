/*
 * Injection tokens of benchmarking's own providers. gpunet builds without decorator metadata, so
 * every injection names its token (ADR 0002).
 */

/** The service's `BenchmarkingConfig`. */
export const BENCHMARKING_CONFIG = Symbol('gpunet.benchmarking.config');
/** The service's `BenchmarkingMetrics`. */
export const BENCHMARKING_METRICS = Symbol('gpunet.benchmarking.metrics');
/** Uniform [0, 1) source for spot checks and probe sampling (`() => number`). */
export const BENCHMARKING_RANDOM = Symbol('gpunet.benchmarking.random');
/** The verifier's monotonic clock (`MonotonicClock`) that times edges' answers. */
export const BENCHMARKING_MONOTONIC_CLOCK = Symbol('gpunet.benchmarking.monotonic-clock');
/** Unpredictable bytes for seeds and openings (`(size) => Uint8Array`). */
export const BENCHMARKING_RANDOM_BYTES = Symbol('gpunet.benchmarking.random-bytes');
