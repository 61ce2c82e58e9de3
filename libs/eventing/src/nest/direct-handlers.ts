import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { PATTERN_EXTRAS_METADATA, PATTERN_HANDLER_METADATA } from '@nestjs/microservices/constants';
import { PatternHandler } from '@nestjs/microservices/enums/pattern-handler.enum';
import { RpcParamtype } from '@nestjs/microservices/enums/rpc-paramtype.enum';
import type { EventingRuntime } from './eventing.runtime';
import { EVENTING } from './eventing.tokens';
import { RethrowRpcFilter } from './rethrow.filter';

/** A controller's event handler method, called with its payload and context in its parameters' places. */
export type DirectHandler = (payload: unknown, context: unknown) => unknown;

/** Where a parameter's value comes from: the payload, the context, or (an undecorated one) nothing. */
type Argument = 'payload' | 'context' | 'none';

/**
 * The arguments of a method whose parameters are `@Payload()` / `@Ctx()` without pipes; undefined
 * when any parameter asks for more (a pipe, a property of the payload, another decorator).
 */
const argumentsOf = (
  metadata: Record<string, { index: number; data?: unknown; pipes?: unknown[] }>,
): Argument[] | undefined => {
  const order: Argument[] = [];
  for (const [key, param] of Object.entries(metadata)) {
    // Nest keys a parameter `<paramtype>:<index>`.
    const type = Number(key.split(':')[0]) as RpcParamtype;
    if ((param.pipes?.length ?? 0) > 0 || param.data !== undefined) return undefined;
    if (type === RpcParamtype.PAYLOAD) order[param.index] = 'payload';
    else if (type === RpcParamtype.CONTEXT) order[param.index] = 'context';
    else return undefined;
  }
  return Array.from(order, (a) => a ?? 'none');
};

const hasEnhancers = (...targets: object[]): boolean =>
  targets.some((target) =>
    [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA].some(
      (key) => ((Reflect.getMetadata(key, target) as unknown[] | undefined)?.length ?? 0) > 0,
    ),
  );

/**
 * The fast path of the JetStream transport's event handlers. Nest calls a handler through its RPC
 * proxy (exception zone, guards, interceptors, pipes for each parameter): several promises per call,
 * ~10–15 % of a per-message consumer's CPU in bench/eventing. When a handler has none of those to
 * apply — no guard, interceptor, pipe or filter on it, its class or the application (bar
 * `RethrowRpcFilter`, which only rethrows), and only `@Payload()` / `@Ctx()` parameters — the
 * transport calls the method itself with the same arguments, and its error reaches the consumer as
 * thrown, as through the proxy. Any other handler keeps Nest's full path. Found at module init
 * (after Nest registered the handlers, before the transport listens) and kept on the service's
 * `EventingRuntime`.
 */
@Injectable()
export class DirectHandlers implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(ApplicationConfig) private readonly config: ApplicationConfig,
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
  ) {}

  onModuleInit(): void {
    const direct = new Map<object, DirectHandler>();
    const { config } = this;
    const globals =
      config.getGlobalGuards().length +
      config.getGlobalInterceptors().length +
      config.getGlobalPipes().length +
      config.getGlobalRequestGuards().length +
      config.getGlobalRequestInterceptors().length +
      config.getGlobalRequestPipes().length +
      config.getGlobalRequestFilters().length +
      config.getGlobalFilters().filter((f) => !(f instanceof RethrowRpcFilter)).length;
    if (globals === 0)
      for (const wrapper of this.discovery.getControllers()) {
        const instance = wrapper.instance as Record<string, unknown> | undefined;
        if (!instance || !wrapper.isDependencyTreeStatic()) continue;
        const prototype = Object.getPrototypeOf(instance) as object;
        if (hasEnhancers(instance.constructor)) continue;
        for (const name of this.scanner.getAllMethodNames(prototype)) {
          const method = (prototype as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
          if (Reflect.getMetadata(PATTERN_HANDLER_METADATA, method) !== PatternHandler.EVENT) continue;
          const extras = Reflect.getMetadata(PATTERN_EXTRAS_METADATA, method) as object | undefined;
          if (!extras || hasEnhancers(method)) continue;
          const order = argumentsOf(
            (Reflect.getMetadata(ROUTE_ARGS_METADATA, instance.constructor, name) ?? {}) as Parameters<
              typeof argumentsOf
            >[0],
          );
          if (!order) continue;
          direct.set(extras, (payload, context) =>
            method.apply(
              instance,
              order.map((a) => (a === 'payload' ? payload : a === 'context' ? context : undefined)),
            ),
          );
        }
      }
    this.eventing.bindDirectHandlers(direct);
  }
}
