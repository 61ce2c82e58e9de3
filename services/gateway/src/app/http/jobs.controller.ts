import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JOB_STREAMS, JOBS_SERVICE } from '../gateway.tokens';
import type { JobsService } from '../jobs.service';
import * as S from './api.schemas';
import { contentTypeOf, idempotencyKeyOf, rawBodyOf, requireScope } from './request-context';
import { sendStored } from './reply';
import type { JobStreams } from './sse';
import { parseInput, parseJsonBody } from './validate';

/** A reconnecting EventSource's `Last-Event-ID` (the last `id` it saw); anything else is ignored. */
const lastEventIdOf = (request: FastifyRequest): number | undefined => {
  const value = request.headers['last-event-id'];
  return typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : undefined;
};

@Controller('v1/jobs')
export class JobsController {
  constructor(
    @Inject(JOBS_SERVICE) private readonly jobs: JobsService,
    @Inject(JOB_STREAMS) private readonly streams: JobStreams,
  ) {}

  @Post()
  async submit(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const response = await this.jobs.submit(
      principal,
      rawBodyOf(request),
      contentTypeOf(request),
      idempotencyKeyOf(request),
    );
    const jobId = (response.body as { jobId?: string }).jobId;
    return sendStored(reply, response, jobId ? `/v1/jobs/${jobId}` : undefined);
  }

  @Get()
  list(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const query = parseInput(S.JobListQuery, request.query, 'query');
    return this.jobs.list(principal, query);
  }

  @Get(':jobId')
  async get(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    const json = await this.jobs.getJson(principal, jobId);
    // The stored JSON text, sent as is (Fastify serializes only what is not a string).
    void reply.type('application/json; charset=utf-8');
    return json;
  }

  @Get(':jobId/spec')
  spec(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    return this.jobs.spec(principal, jobId);
  }

  @Get(':jobId/statement')
  statement(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    return this.jobs.statement(principal, jobId);
  }

  @Get(':jobId/explanation')
  explanation(@Req() request: FastifyRequest): Promise<unknown> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    return this.jobs.explanation(principal, jobId);
  }

  @Post(':jobId/cancel')
  async cancel(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const principal = requireScope(request, 'submit');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    const raw = rawBodyOf(request);
    const body = parseJsonBody(S.CancelBody, raw, false);
    const response = await this.jobs.cancel(
      principal,
      jobId,
      body.reason ?? null,
      raw,
      idempotencyKeyOf(request),
    );
    return sendStored(reply, response);
  }

  @Get(':jobId/events')
  async events(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    const query = parseInput(S.EventsQuery, request.query, 'query');
    await this.jobs.get(principal, jobId);
    this.streams.events(request, reply, jobId, query.after ?? lastEventIdOf(request) ?? 0);
  }

  @Get(':jobId/logs')
  async logs(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const principal = requireScope(request, 'read');
    const { jobId } = parseInput(S.JobIdParams, request.params, 'path');
    const query = parseInput(S.LogsQuery, request.query, 'query');
    await this.jobs.get(principal, jobId);
    const after = query.after ?? lastEventIdOf(request);
    await this.streams.logs(request, reply, jobId, {
      follow: query.follow ?? false,
      ...(after !== undefined ? { afterSeq: after } : {}),
      ...(query.rank !== undefined ? { rank: query.rank } : {}),
      ...(query.stream !== undefined ? { stream: query.stream } : {}),
    });
  }
}
