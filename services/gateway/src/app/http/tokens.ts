/** Injection tokens of the gateway's HTTP layer (no decorator metadata: ADR 0002). */
export const GATEWAY_RUNTIME = Symbol('gpunet.gateway.runtime');
export const JOBS_SERVICE = Symbol('gpunet.gateway.jobs');
export const MARKET_SERVICE = Symbol('gpunet.gateway.market');
export const STREAMS = Symbol('gpunet.gateway.streams');
export const METRICS_REGISTRY = Symbol('gpunet.gateway.metrics');
