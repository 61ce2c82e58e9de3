/** Injection tokens of discovery's providers (gpunet builds without decorator metadata). */
export const DISCOVERY = Symbol('gpunet.discovery');
export const PROVIDER_COMMANDS = Symbol('gpunet.discovery.provider-commands');
export const DISCOVERY_METRICS = Symbol('gpunet.discovery.metrics');
export const CANDIDATES = Symbol('gpunet.discovery.candidates');
export const HEARTBEATS = Symbol('gpunet.discovery.heartbeats');
