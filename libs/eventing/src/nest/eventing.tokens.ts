/**
 * Injection token of the service's `EventingRuntime`. gpunet builds without decorator metadata, so
 * every injection names its token (ADR 0002).
 */
export const EVENTING = Symbol('gpunet.eventing');
