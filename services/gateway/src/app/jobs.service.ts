import {
  JobCancelRequested,
  JobStatementQuery,
  JobSubmitted,
  newEventId,
  type PayloadOf,
  type QueryDefinition,
  type QueryRequest,
  type QueryResponse,
} from '@gpunet/contracts';
import { parseEnsembleSpec } from '@gpunet/ensemble-spec';
import { askQuery, type NewEvent, NoRespondersError, QueryTimeoutError, type Tx } from '@gpunet/eventing';
import {
  ConflictError,
  InvalidSpecError,
  NotFoundError,
  RequestValidationError,
  UnsupportedMediaTypeError,
  UpstreamUnavailableError,
} from '../domain/gateway.errors';
import { deriveJobTerms } from '../domain/job-terms';
import { type JobStatus, type JobView, submittedView, TERMINAL_STATUSES } from '../domain/job-view';
import { decodeCursor, type JobPage } from '../infra/jobs.projection';
import type { ApiPrincipal } from './api-keys';
import type { GatewayRuntime } from './gateway.runtime';
import { requestHash, type StoredResponse } from './idempotency.store';

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

/** An event the gateway appends, stamped now, starting its own correlation. */
export const gatewayEvent = (def: { type: string; version: number }, data: unknown, now: Date): NewEvent => {
  const eventId = newEventId();
  return {
    eventId,
    type: def.type,
    version: def.version,
    data,
    occurredAt: now.toISOString(),
    correlationId: eventId,
    causationId: null,
  };
};

/** Submitting, reading and cancelling jobs, each by the caller's tenant. */
export class JobsService {
  constructor(
    private readonly runtime: GatewayRuntime,
    private readonly now: () => Date = () => new Date(),
  ) {}

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
    const tenantSubnet = await this.runtime.keys.defaultSubnet(principal.tenantId);
    return this.runtime.idempotency.run(principal.tenantId, idempotencyKey, hash, async (tx) => {
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
      const fallback = tenantSubnet ?? this.runtime.config.defaultSubnet;
      const terms = deriveJobTerms(spec, fallback);
      if (!terms.ok) throw new InvalidSpecError(terms.errors);
      const jobId = newJobId();
      const submittedAt = this.now().toISOString();
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
      const { events } = await this.runtime.store.append(
        `job-${jobId}`,
        [gatewayEvent(JobSubmitted, data, this.now())],
        { expectedVersion: 'no_stream', tx },
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
      await this.runtime.projection.insertSubmitted(tx, view, spec, events[0]!);
      return { status: 202, body: view };
    });
  }

  /** The job as JSON text, as stored: `GET /v1/jobs/{id}` sends it without parsing it. */
  async getJson(principal: ApiPrincipal, jobId: string): Promise<string> {
    const json = await this.runtime.projection.getJson(principal.tenantId, jobId);
    if (json === null) throw new NotFoundError(`no job ${jobId}`);
    return json;
  }

  async get(principal: ApiPrincipal, jobId: string): Promise<JobView> {
    const view = await this.runtime.projection.get(principal.tenantId, jobId);
    if (!view) throw new NotFoundError(`no job ${jobId}`);
    return view;
  }

  async spec(principal: ApiPrincipal, jobId: string): Promise<unknown> {
    const spec = await this.runtime.projection.getSpec(principal.tenantId, jobId);
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
    return this.runtime.projection.list(principal.tenantId, {
      limit: filter.limit,
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.subnet !== undefined ? { subnetId: filter.subnet } : {}),
      ...(filter.cursor !== undefined ? { cursor: filter.cursor } : {}),
    });
  }

  /**
   * Appends `job.cancel-requested` once: a second cancel of a job already being cancelled answers
   * the same without a second event; a job that has ended cannot be cancelled (409).
   */
  cancel(
    principal: ApiPrincipal,
    jobId: string,
    reason: string | null,
    rawBody: string,
    idempotencyKey: string | undefined,
  ): Promise<StoredResponse> {
    const hash = requestHash('POST', `/v1/jobs/${jobId}/cancel`, 'application/json', rawBody);
    return this.runtime.idempotency.run(principal.tenantId, idempotencyKey, hash, async (tx: Tx) => {
      const rows = await tx.query<{ view: JobView }>(
        `SELECT view FROM "${tx.schema}".jobs WHERE job_id = $1 AND tenant_id = $2 FOR UPDATE`,
        [jobId, principal.tenantId],
      );
      const view = rows[0]?.view;
      if (!view) throw new NotFoundError(`no job ${jobId}`);
      if (TERMINAL_STATUSES.has(view.status))
        throw new ConflictError(`job ${jobId} has already ended (${view.status})`);
      if (view.cancelRequestedAt !== null) return { status: 202, body: view };
      const data: PayloadOf<typeof JobCancelRequested> = {
        jobId,
        tenantId: principal.tenantId,
        reason,
        requestedAt: this.now().toISOString(),
      };
      const { events } = await this.runtime.store.append(
        `job-${jobId}`,
        [gatewayEvent(JobCancelRequested, data, this.now())],
        { expectedVersion: 'any', tx },
      );
      await this.runtime.projection.apply(tx, events[0]!);
      const after = await tx.query<{ view: JobView }>(
        `SELECT view FROM "${tx.schema}".jobs WHERE job_id = $1`,
        [jobId],
      );
      return { status: 202, body: after[0]!.view };
    });
  }

  async statement(principal: ApiPrincipal, jobId: string): Promise<unknown> {
    await this.get(principal, jobId);
    const s = await ask(this.runtime, JobStatementQuery, { jobId });
    const { tenantId: _t, subnetId: _s, ...rest } = s;
    return rest;
  }
}

/** Asks another service; its absence or silence is a 503, not a 500. */
export const ask = async <Q extends QueryDefinition>(
  runtime: GatewayRuntime,
  def: Q,
  request: QueryRequest<Q>,
): Promise<QueryResponse<Q>> => {
  try {
    return await askQuery(runtime.nats.nc, def, request, {
      prefix: runtime.config.prefix,
      timeoutMs: runtime.config.queryTimeoutMs,
    });
  } catch (error) {
    if (error instanceof NoRespondersError || error instanceof QueryTimeoutError)
      throw new UpstreamUnavailableError(`${def.name} is unavailable: ${error.message}`, { cause: error });
    throw error;
  }
};
