import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { recordFailure, SpanKind } from '@gpunet/telemetry';
import { context, propagation, trace } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';

/**
 * One server span per request (child of the caller's `traceparent`), active while the handler runs: the event store records it with every
 * event appended, and the trace continues through the outbox and NATS into the services that
 * consume the gateway's events.
 */
@Injectable()
export class TracingInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = ctx.switchToHttp().getRequest<FastifyRequest>();
    const reply = ctx.switchToHttp().getResponse<FastifyReply>();
    const route = request.routeOptions.url ?? 'unknown';
    // A caller's W3C `traceparent` makes this span its child: one trace from the client on.
    const parent = propagation.extract(context.active(), request.headers);
    const span = trace
      .getTracer('gateway')
      .startSpan(
        `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } },
        parent,
      );
    const active = trace.setSpan(parent, span);
    return new Observable((subscriber) =>
      context.with(active, () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            recordFailure(span, error);
            span.end();
            subscriber.error(error);
          },
          complete: () => {
            span.setAttribute('http.response.status_code', reply.statusCode);
            span.end();
            subscriber.complete();
          },
        }),
      ),
    );
  }
}
