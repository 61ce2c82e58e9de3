import { defineStream, type StreamDefinition } from '../stream';

/*
 * Every JetStream stream gpunet declares, in one place so that no two of them capture the same
 * subject. Edge-originated messages travel on `edge.{edgeId}.…` (NATS permissions restrict every
 * edge to its own), commands to an edge on `cmd.edge.{edgeId}.…`, which no stream captures.
 */

/**
 * The `stream` of a message that is never stored: commands an edge answers by core NATS
 * request/reply. No stream may capture their subjects — JetStream would answer the request with its
 * own publish acknowledgement before the edge could.
 */
export const CORE_REQUEST_REPLY = '(core NATS request/reply: never stored)';

/** Messages no consumer could handle, kept for people to inspect and replay. */
export const DeadLettersStream = defineStream({
  name: 'DEAD_LETTERS',
  subjects: ['dlq.>'],
  description: 'Messages a consumer gave up on, with the reason and the original bytes.',
  maxAgeMs: 30 * 24 * 3600 * 1000,
});

/** The gateway's stream: requests of orchestrators, providers and subnet owners, as events. */
export const GatewayStream = defineStream({
  name: 'GATEWAY',
  subjects: ['gateway.>'],
  description: 'What people asked for through the gateway: jobs submitted, subnets, withdrawals.',
});

/** The execution service's stream: the life of placed jobs and their usage. */
export const ExecutionStream = defineStream({
  name: 'EXECUTION',
  subjects: ['execution.>'],
  description: 'Jobs started, completed, failed and cancelled, and their metered usage.',
});

/** Settlement's own stream. */
export const SettlementStream = defineStream({
  name: 'SETTLEMENT',
  subjects: ['settlement.>'],
  description: 'Escrow, metering, payouts, deposits, withdrawals, subnets, stake and reconciliation.',
});

/** What edges report about themselves: registrations, inventories, policies, reservations. */
export const EdgeStream = defineStream({
  name: 'EDGE',
  subjects: [
    'edge.*.registered.v1',
    'edge.*.inventory-reported.v1',
    'edge.*.policy-reported.v1',
    'edge.*.reservations-reported.v1',
    'edge.*.deregistered.v1',
  ],
  description: 'Signed reports of provider edges about themselves; discovery consumes them.',
  maxAgeMs: 30 * 24 * 3600 * 1000,
});

/**
 * The last minute of heartbeats, for people inspecting an edge and for a restarted discovery that
 * wants recent liveness. Discovery reads heartbeats live on core NATS, never through a consumer.
 */
export const EdgeLivenessStream = defineStream({
  name: 'EDGE_LIVENESS',
  subjects: ['edge.*.heartbeat.v1'],
  description: 'Recent edge heartbeats (one minute).',
  maxAgeMs: 60_000,
  duplicateWindowMs: 30_000,
});

/** The provider aggregate's events, as discovery decided them. */
export const DiscoveryStream = defineStream({
  name: 'DISCOVERY',
  subjects: ['discovery.>'],
  description: 'Provider registry and liveness events decided by discovery.',
});

/** Signed benchmark and probe results of edges; benchmarking consumes them. */
export const EdgeBenchmarkStream = defineStream({
  name: 'EDGE_BENCHMARKS',
  subjects: ['edge.*.benchmark-reported.v1', 'edge.*.links-probed.v1'],
  description: 'Signed benchmark profiles and link probe results reported by provider edges.',
  maxAgeMs: 30 * 24 * 3600 * 1000,
});

/** What benchmarking decided: profiles, link measurements, verification outcomes, reliability. */
export const BenchmarkingStream = defineStream({
  name: 'BENCHMARKING',
  subjects: ['benchmarking.>'],
  description: 'GPU performance profiles, link measurements and claim verification decided by benchmarking.',
});

/** The scheduler's decisions about jobs. */
export const SchedulerStream = defineStream({
  name: 'SCHEDULER',
  subjects: ['scheduler.>'],
  description: 'Jobs queued, placed (with their reservations) and unschedulable, as the scheduler decided.',
});

/** What edges say about the ranks they run: started, heartbeat, exited. */
export const EdgeRanksStream = defineStream({
  name: 'EDGE_RANKS',
  subjects: ['edge.*.rank-status.v1', 'edge.*.rank-status.v2'],
  description: 'Rank lifecycle reported by the edges that run them; execution consumes it.',
  maxAgeMs: 7 * 24 * 3600 * 1000,
});

/** Rank output, kept a day for people following a job (bounded in bytes and per job and edge). */
export const JobLogsStream = defineStream({
  name: 'JOB_LOGS',
  subjects: ['edge.*.log.*.v1'],
  description: "Ranks' stdout and stderr in chunks, for `gpunet job logs` and the gateway's SSE.",
  maxAgeMs: 24 * 3600 * 1000,
  maxBytes: 1024 * 1024 * 1024,
  maxMsgsPerSubject: 100_000,
  duplicateWindowMs: 60_000,
});

/** Every provider stream. */
export const providerStreams: readonly StreamDefinition[] = [EdgeStream, EdgeLivenessStream, DiscoveryStream];

/** Every benchmarking stream. */
export const benchmarkingStreams: readonly StreamDefinition[] = [EdgeBenchmarkStream, BenchmarkingStream];

/** Every scheduler stream. */
export const schedulerStreams: readonly StreamDefinition[] = [SchedulerStream];

/** Every stream execution declares. */
export const executionStreams: readonly StreamDefinition[] = [EdgeRanksStream, JobLogsStream];

/** Every stream gpunet declares. */
export const streams: readonly StreamDefinition[] = [
  DeadLettersStream,
  GatewayStream,
  ExecutionStream,
  SettlementStream,
  ...executionStreams,
];
