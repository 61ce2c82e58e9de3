/** Injection tokens of the gateway's providers (no decorator metadata: ADR 0002). */
export const GATEWAY_CONFIG = Symbol('gpunet.gateway.config');
export const METRICS_REGISTRY = Symbol('gpunet.gateway.metrics');
export const API_KEYS = Symbol('gpunet.gateway.api-keys');
export const IDEMPOTENCY = Symbol('gpunet.gateway.idempotency');
export const JOBS_PROJECTION = Symbol('gpunet.gateway.jobs-projection');
export const UPSTREAM = Symbol('gpunet.gateway.upstream');
export const JOBS_SERVICE = Symbol('gpunet.gateway.jobs');
export const MARKET_SERVICE = Symbol('gpunet.gateway.market');
export const STREAMS = Symbol('gpunet.gateway.streams');
export const JOB_STREAMS = Symbol('gpunet.gateway.job-streams');
