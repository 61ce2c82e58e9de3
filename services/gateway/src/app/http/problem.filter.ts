import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError } from '../../domain/gateway.errors';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../../domain/problem';
import { recordRequestFailure } from './tracing.hooks';

/** Nest's own exceptions (unknown route …) as the framework errors `toProblem` understands. */
const normalize = (error: unknown): unknown =>
  error instanceof HttpException ? { statusCode: error.getStatus(), message: error.message } : error;

/**
 * The one place errors become HTTP responses (STYLE.md Errors): RFC 9457 problem+json. Used by the
 * Nest filter and by Fastify's error handler (body parsing, limits, hooks), so every error looks alike.
 */
export const sendProblem = (
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  log: (error: unknown) => void,
): void => {
  const problem = toProblem(normalize(error), request.url.split('?')[0] ?? '/');
  recordRequestFailure(request, error);
  if (problem.status >= 500 && problem.code === 'INTERNAL') log(error);
  if (error instanceof RateLimitedError) void reply.header('retry-after', String(error.retryAfterSeconds));
  if (reply.sent || reply.raw.headersSent) return;
  void reply
    .status(problem.status)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem));
};

@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(private readonly log: (error: unknown) => void) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendProblem(error, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.log);
  }
}
