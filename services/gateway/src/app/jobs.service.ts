import {
  GetPlacementExplanation,
  JobStatementQuery,
  JobSubmitted,
  newEventId,
  originOf,
  type PayloadOf,
  streamIdOf,
} from '@gpunet/contracts';
import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { type CommandHandler, EVENTING, type EventingRuntime } from '@gpunet/eventing';
import { Inject, Injectable } from '@nestjs/common';
import {
  InvalidSpecError,
  NotFoundError,
  RequestValidationError,
  UnsupportedMediaTypeError,
} from '../domain/gateway.errors';
import {
  type JobRequestEvent,
  type JobRequests,
  jobRequestsDecider,
  type RequestJobCancel,
} from '../domain/job-requests.decider';
import { deriveJobTerms } from '../domain/job-terms';
import { type JobStatus, type JobView, submittedView } from '../domain/job-view';
import { decodeCursor, type JobPage, type JobsProjection } from '../infra/jobs.projection';
import type { ApiKeyStore, ApiPrincipal } from './api-keys';
import type { GatewayConfig } from './gateway.config';
import { API_KEYS, GATEWAY_CONFIG, IDEMPOTENCY, JOBS_PROJECTION, UPSTREAM } from './gateway.tokens';
import { type IdempotencyStore, requestHash, type StoredResponse } from './idempotency.store';
import { appendRequested, newRequestId } from './request-chain';
import type { Upstream } from './upstream';

const YAML_TYPES = new Set([
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'text/plain',
]);

/** The spec's format from the request's content type; JSON is also valid YAML, but errors read better. */
export const specFormatOf = (contentType: string): 'json' | 'yaml' => {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return 'json';
  if (YAML_TYPES.has(type) || type === '') return 'yaml';
  throw new UnsupportedMediaTypeError(`send the spec as application/yaml or application/json, not ${type}`);
};

export const newJobId = (): string => newEventId();

/**
 * Submitting, reading and cancelling jobs, each by the caller's tenant. A submission or a cancel
 * starts a chain: its events carry the request's id as correlation and cause, and the job's read
 * model row changes in the same transaction (a client reads its job right after submitting it).
 */
@Injectable()
export class JobsService {
  /** Cancels queue on the job's stream; the read model's row is locked inside the decision. */
  private readonly cancels: CommandHandler<RequestJobCancel, JobRequestEvent, JobRequests>;

  constructor(
    @Inject(EVENTING) private readonly eventing: EventingRuntime,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(JOBS_PROJECTION) private readonly projection: JobsProjection,
    @Inject(API_KEYS) private readonly keys: ApiKeyStore,
    @Inject(IDEMPOTENCY) private readonly idempotency: IdempotencyStore,
    @Inject(UPSTREAM) private readonly upstream: Upstream,
  ) {
    this.cancels = eventing.commandHandler({
      decider: jobRequestsDecider,
      concurrency: 'serial',
      effects: async ({ tx, stored }) => {
        for (const event of stored) await this.projection.apply(tx, event);
      },
    });
  }

  async submit(
    principal: ApiPrincipal,
    body: string,
    contentType: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const format = specFormatOf(contentType);
    const hash = requestHash('POST', '/v1/jobs', contentType, body);
    // Read before the idempotency transaction opens: inside it, a second pooled connection would be
    // needed while the first is held, and a burst of pool-size submissions would wait on each other
    // for ever.
    const tenantSubnet = await this.keys.defaultSubnet(principal.tenantId);
    return this.idempotency.run(principal.tenantId, idempotencyKey, hash, async (tx) => {
      const parsed = parseEnsembleSpec(body, { format });
      if (!parsed.ok)
        throw new InvalidSpecError(
          parsed.errors.map((e) => ({
            path: e.path,
            message: e.message,
            code: e.code,
            ...(e.line !== undefined ? { line: e.line } : {}),
            ...(e.column !== undefined ? { column: e.column } : {}),
          })),
        );
      const spec = parsed.spec;
      const fallback = tenantSubnet ?? this.config.defaultSubnet;
      const terms = deriveJobTerms(spec, fallback);
      if (!terms.ok) throw new InvalidSpecError(terms.errors);
      const jobId = newJobId();
      const requestId = newRequestId();
      const submittedAt = this.eventing.clock.now().toISOString();
      const data: PayloadOf<typeof JobSubmitted> = {
        jobId,
        tenantId: principal.tenantId,
        subnetId: terms.terms.subnetId,
        asset: terms.terms.asset,
        gpus: terms.terms.gpus,
        gpuClasses: [...terms.terms.gpuClasses],
        maxPricePerGpuHour: terms.terms.maxPricePerGpuHour,
        maxDurationSeconds: terms.terms.maxDurationSeconds,
        submittedAt,
        spec,
      };
      const submitted = await appendRequested(
        this.eventing,
        tx,
        { requestId, streamId: streamIdOf('job', jobId), expectedVersion: 'no_stream' },
        JobSubmitted,
        data,
      );
      const view = submittedView({
        jobId,
        tenantId: principal.tenantId,
        name: spec.metadata.name,
        subnetId: data.subnetId,
        asset: data.asset,
        gpus: data.gpus,
        gpuClasses: data.gpuClasses,
        maxPricePerGpuHour: data.maxPricePerGpuHour,
        maxDurationSeconds: data.maxDurationSeconds,
        submittedAt,
      });
      await this.projection.insertSubmitted(tx, view, spec, submitted);
      return { status: 202, body: view, correlationId: requestId };
    });
  }

  /** The job as JSON text, as stored: `GET /v1/jobs/{id}` sends it without parsing it. */
  async getJson(principal: ApiPrincipal, jobId: string): Promise<string> {
    const json = await this.projection.getJson(principal.tenantId, jobId);
    if (json === null) throw new NotFoundError(`no job ${jobId}`);
    return json;
  }

  async get(principal: ApiPrincipal, jobId: string): Promise<JobView> {
    const view = await this.projection.get(principal.tenantId, jobId);
    if (!view) throw new NotFoundError(`no job ${jobId}`);
    return view;
  }

  async spec(principal: ApiPrincipal, jobId: string): Promise<unknown> {
    const spec = await this.projection.getSpec(principal.tenantId, jobId);
    if (spec === null) throw new NotFoundError(`no job ${jobId}`);
    return spec;
  }

  list(
    principal: ApiPrincipal,
    filter: { status?: readonly JobStatus[]; subnet?: string; limit: number; cursor?: string },
  ): Promise<JobPage> {
    if (filter.cursor !== undefined && decodeCursor(filter.cursor) === null)
      throw new RequestValidationError([
        { path: 'query.cursor', message: 'is not a cursor this API returned (use nextCursor as given)' },
      ]);
    return this.projection.list(principal.tenantId, {
      limit: filter.limit,
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.subnet !== undefined ? { subnetId: filter.subnet } : {}),
      ...(filter.cursor !== undefined ? { cursor: filter.cursor } : {}),
    });
  }

  /**
   * Records `job.cancel-requested` once (`jobRequestsDecider`): a second cancel of a job already
   * being cancelled answers the same without a second event; a job that has ended cannot be
   * cancelled (409). The request's id is the cancel's correlation and cause.
   */
  cancel(
    principal: ApiPrincipal,
    jobId: string,
    reason: string | null,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const hash = requestHash('POST', `/v1/jobs/${jobId}/cancel`, 'application/json', rawBody);
    return this.idempotency.run(principal.tenantId, idempotencyKey, hash, async (tx) => {
      const requestId = newRequestId();
      let view: JobView | undefined;
      const handled = await this.cancels.handle(
        streamIdOf('job', jobId),
        async (_state, decisionTx) => {
          view = await this.projection.lockView(decisionTx!, principal.tenantId, jobId);
          if (!view) throw new NotFoundError(`no job ${jobId}`);
          return {
            type: 'RequestJobCancel',
            jobId,
            tenantId: principal.tenantId,
            reason,
            requestedAt: this.eventing.clock.now().toISOString(),
            status: view.status,
          };
        },
        originOf(requestId),
        tx,
      );
      const after = handled.events.length > 0 ? await this.projection.viewIn(tx, jobId) : view;
      return { status: 202, body: after, correlationId: requestId };
    });
  }

  /** The scheduler's explanation of its last attempt at the job; 404 before its first. */
  async explanation(principal: ApiPrincipal, jobId: string): Promise<unknown> {
    const view = await this.get(principal, jobId);
    const { explanation } = await this.upstream.ask(GetPlacementExplanation, { jobId });
    if (explanation === null)
      throw new NotFoundError(
        `job ${jobId} has no placement explanation yet: the scheduler has not tried to place it (status ${view.status})`,
      );
    return explanation;
  }

  async statement(principal: ApiPrincipal, jobId: string): Promise<unknown> {
    await this.get(principal, jobId);
    const s = await this.upstream.ask(JobStatementQuery, { jobId });
    const { tenantId: _t, subnetId: _s, ...rest } = s;
    return rest;
  }
}
