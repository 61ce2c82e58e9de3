import { parseDurationMs } from '@gpunet/ensemble-spec';
import type { ServiceConnection } from '@gpunet/eventing';
import {
  envDuration,
  InvalidConfigError,
  parseServiceEnv,
  serviceConnectionOf,
  serviceEnvShape,
} from '@gpunet/service-runtime';
import { z } from 'zod';

/** Benchmarking's settings, from the environment. Durations take units (`15m`, `7d`). */
export interface BenchmarkingConfig extends ServiceConnection {
  /** Period of benchmark sweeps (expire, renew, spot-check); 0: only on `sweep()`. Default 1m. */
  readonly sweepIntervalMs: number;
  /** Period of network probe cycles; 0: only on `probeCycle()`. Default 30m. */
  readonly probeIntervalMs: number;
  /** Validity of a GPU profile. Default 7d. */
  readonly profileTtlMs: number;
  /** Renew a profile this long before it expires. Default 1d. */
  readonly renewBeforeMs: number;
  /** Chance per sweep of an unannounced re-benchmark of a provider. Default 0.002 (with 1 m sweeps, about one every 8 h, never within `spotCheckMinIntervalMs`). */
  readonly spotCheckProbability: number;
  /** No spot check sooner than this after the last request. Default 1d. */
  readonly spotCheckMinIntervalMs: number;
  /** A request without a report by then fails. Default 15m. */
  readonly benchmarkTimeoutMs: number;
  /** The edge must finish a run within this. Default 5m. */
  readonly benchmarkMaxDurationMs: number;
  /** Requests per sweep at most. Default 50. */
  readonly maxRequestsPerSweep: number;
  /** How long the edge has to answer a command (accepted/declined). Default 5s. */
  readonly commandTimeoutMs: number;
  /** Peers each host probes per cycle. Default 4. */
  readonly probePeers: number;
  /** Of those, with a throughput transfer. Default 1. */
  readonly throughputPeers: number;
  /** Edges' probe responder ports. Default 7946 (UDP) / 7947 (TCP). */
  readonly probeUdpPort: number;
  readonly probeTcpPort: number;
  /** Probe hosts at loopback addresses too (single-machine tests and demos). Default false. */
  readonly probeLoopback: boolean;
  readonly rttSamples: number;
  readonly rttTimeoutMs: number;
  /** Bytes and time of one transfer at most. Default 16 MiB / 3 s. */
  readonly throughputMaxBytes: number;
  readonly throughputMaxMs: number;
  /** Validity of a link measurement. Default 6h. */
  readonly linkTtlMs: number;
  /** RTT below which two hosts are one site (LAN). Default 1ms. */
  readonly lanRttUs: number;
  /** Benchmark and probe hosts whose GPUs a job holds (the edge's policy must allow it too). Default false. */
  readonly allowWhileBusy: boolean;
  /** GPU challenges (registration, idle, spot checks during jobs). Default true. */
  readonly challengesEnabled: boolean;
  /** Period of challenge ticks (expire, registration, idle, spot checks); 0: only on `tick()`. Default 1m. */
  readonly challengeTickIntervalMs: number;
  /** Mean time between idle challenges of one GPU (random, Poisson); 0: none. Default 6h. */
  readonly challengeIdleIntervalMs: number;
  /** Challenges started per tick at most. Default 50. */
  readonly maxChallengesPerTick: number;
  /**
   * After the deadline the verifier still waits this long for a commitment, so that a slow answer is
   * recorded as `late` (with its time) rather than as none. Default 5s.
   */
  readonly challengeLateGraceMs: number;
  /** How long the edge has to open a commitment. Default 10s. */
  readonly challengeOpenTimeoutMs: number;
  /** Overrides of the challenge library's `DEFAULT_CHALLENGE_POLICY`; unset: its values. */
  readonly challengePolicy: ChallengePolicyOverrides;
}

/** The parts of the challenge policy an operator may set. */
export interface ChallengePolicyOverrides {
  readonly maxN?: number;
  readonly allowanceMs?: number;
  readonly slack?: number;
  readonly openRows?: number;
}

const int = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** A duration with units that may be left unset (then the library's value stands). */
const optionalDuration = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined) return undefined;
    const d = parseDurationMs(text);
    if (!d.ok) {
      ctx.addIssue({ code: 'custom', message: d.reason });
      return z.NEVER;
    }
    return d.value;
  });

const EnvSchema = z.object({
  ...serviceEnvShape('benchmarking'),
  BENCHMARK_SWEEP_INTERVAL: envDuration('1m'),
  PROBE_INTERVAL: envDuration('30m'),
  PROFILE_TTL: envDuration('7d'),
  PROFILE_RENEW_BEFORE: envDuration('1d'),
  SPOT_CHECK_PROBABILITY: z.coerce.number().min(0).max(1).default(0.002),
  SPOT_CHECK_MIN_INTERVAL: envDuration('1d'),
  BENCHMARK_TIMEOUT: envDuration('15m'),
  BENCHMARK_MAX_DURATION: envDuration('5m'),
  BENCHMARK_MAX_PER_SWEEP: int(50, 1, 10_000),
  EDGE_COMMAND_TIMEOUT: envDuration('5s'),
  PROBE_PEERS: int(4, 1, 64),
  PROBE_THROUGHPUT_PEERS: int(1, 0, 64),
  PROBE_UDP_PORT: int(7946, 1, 65535),
  PROBE_TCP_PORT: int(7947, 1, 65535),
  PROBE_RTT_SAMPLES: int(10, 1, 64),
  PROBE_RTT_TIMEOUT: envDuration('1s'),
  PROBE_THROUGHPUT_MAX_BYTES: int(16 * 1024 * 1024, 1, 256 * 1024 * 1024),
  PROBE_THROUGHPUT_MAX_DURATION: envDuration('3s'),
  PROBE_LOOPBACK: z.enum(['true', 'false']).default('false'),
  LINK_TTL: envDuration('6h'),
  LAN_RTT_US: int(1000, 1, 1_000_000),
  BENCHMARK_WHILE_BUSY: z.enum(['true', 'false']).default('false'),
  BENCHMARKING_CHALLENGES: z.enum(['true', 'false']).default('true'),
  BENCHMARKING_CHALLENGE_INTERVAL: envDuration('1m'),
  BENCHMARKING_CHALLENGE_IDLE_INTERVAL: envDuration('6h'),
  BENCHMARKING_CHALLENGE_MAX_PER_TICK: int(50, 1, 10_000),
  BENCHMARKING_CHALLENGE_LATE_GRACE: envDuration('5s'),
  BENCHMARKING_CHALLENGE_OPEN_TIMEOUT: envDuration('10s'),
  BENCHMARKING_CHALLENGE_MAX_N: z.coerce
    .number()
    .int()
    .min(16)
    .max(16_384)
    .refine((n) => n % 16 === 0, 'must be a multiple of 16')
    .optional(),
  BENCHMARKING_CHALLENGE_ALLOWANCE: optionalDuration,
  BENCHMARKING_CHALLENGE_SLACK: z.coerce.number().min(1).max(1000).optional(),
  BENCHMARKING_CHALLENGE_OPEN_ROWS: z.coerce.number().int().min(1).max(64).optional(),
});

/** Reads the configuration; every problem names its variable. */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): BenchmarkingConfig => {
  const e = parseServiceEnv('benchmarking', EnvSchema, env);
  return {
    ...serviceConnectionOf('benchmarking', e),
    sweepIntervalMs: e.BENCHMARK_SWEEP_INTERVAL,
    probeIntervalMs: e.PROBE_INTERVAL,
    profileTtlMs: e.PROFILE_TTL,
    renewBeforeMs: e.PROFILE_RENEW_BEFORE,
    spotCheckProbability: e.SPOT_CHECK_PROBABILITY,
    spotCheckMinIntervalMs: e.SPOT_CHECK_MIN_INTERVAL,
    benchmarkTimeoutMs: e.BENCHMARK_TIMEOUT,
    benchmarkMaxDurationMs: e.BENCHMARK_MAX_DURATION,
    maxRequestsPerSweep: e.BENCHMARK_MAX_PER_SWEEP,
    commandTimeoutMs: e.EDGE_COMMAND_TIMEOUT,
    probePeers: e.PROBE_PEERS,
    throughputPeers: e.PROBE_THROUGHPUT_PEERS,
    probeUdpPort: e.PROBE_UDP_PORT,
    probeTcpPort: e.PROBE_TCP_PORT,
    probeLoopback: e.PROBE_LOOPBACK === 'true',
    rttSamples: e.PROBE_RTT_SAMPLES,
    rttTimeoutMs: e.PROBE_RTT_TIMEOUT,
    throughputMaxBytes: e.PROBE_THROUGHPUT_MAX_BYTES,
    throughputMaxMs: e.PROBE_THROUGHPUT_MAX_DURATION,
    linkTtlMs: e.LINK_TTL,
    lanRttUs: e.LAN_RTT_US,
    allowWhileBusy: e.BENCHMARK_WHILE_BUSY === 'true',
    challengesEnabled: e.BENCHMARKING_CHALLENGES === 'true',
    challengeTickIntervalMs: e.BENCHMARKING_CHALLENGE_INTERVAL,
    challengeIdleIntervalMs: e.BENCHMARKING_CHALLENGE_IDLE_INTERVAL,
    maxChallengesPerTick: e.BENCHMARKING_CHALLENGE_MAX_PER_TICK,
    challengeLateGraceMs: e.BENCHMARKING_CHALLENGE_LATE_GRACE,
    challengeOpenTimeoutMs: e.BENCHMARKING_CHALLENGE_OPEN_TIMEOUT,
    challengePolicy: {
      ...(e.BENCHMARKING_CHALLENGE_MAX_N === undefined ? {} : { maxN: e.BENCHMARKING_CHALLENGE_MAX_N }),
      ...(e.BENCHMARKING_CHALLENGE_ALLOWANCE === undefined
        ? {}
        : { allowanceMs: e.BENCHMARKING_CHALLENGE_ALLOWANCE }),
      ...(e.BENCHMARKING_CHALLENGE_SLACK === undefined ? {} : { slack: e.BENCHMARKING_CHALLENGE_SLACK }),
      ...(e.BENCHMARKING_CHALLENGE_OPEN_ROWS === undefined
        ? {}
        : { openRows: e.BENCHMARKING_CHALLENGE_OPEN_ROWS }),
    },
  };
};

export { InvalidConfigError };
