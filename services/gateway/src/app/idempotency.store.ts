import { createHash } from 'node:crypto';
import type { Database, Tx } from '@gpunet/eventing';
import { IdempotencyKeyReusedError, RequestValidationError } from '../domain/gateway.errors';
import { decideIdempotency, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency';
import type { IdempotencyRepository } from '../infra/idempotency.repository';

/** A response a POST produced: what a replay with the same Idempotency-Key gets again. */
export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
  /** The correlation the request started (its id: `X-Correlation-Id`), when it appended events. */
  readonly correlationId?: string;
  /** True when this is a replay of a stored response. */
  readonly replayed?: boolean;
}

/** SHA-256 of what makes two requests "the same": method, route, content type and body bytes. */
export const requestHash = (method: string, route: string, contentType: string, body: string): string =>
  createHash('sha256')
    .update(`${method}\n${route}\n${contentType.split(';')[0]!.trim().toLowerCase()}\n`)
    .update(body)
    .digest('hex');

/**
 * Runs POST handlers at most once per (tenant, Idempotency-Key). The key's row is inserted at the
 * start of the handler's own transaction: a concurrent request with the same key waits on it and
 * then replays the committed response (its correlation too); a handler that fails rolls its key
 * back with everything else, so a corrected retry runs.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Database,
    private readonly keys: IdempotencyRepository,
  ) {}

  async run(
    tenantId: string,
    key: string | undefined,
    hash: string,
    handler: (tx: Tx) => Promise<StoredResponse>,
    /** What is stored for replays, when the response holds something that must not be (a secret). */
    redact: (body: unknown) => unknown = (body) => body,
  ): Promise<StoredResponse> {
    if (key === undefined) return this.db.transaction(handler);
    if (!IDEMPOTENCY_KEY_PATTERN.test(key))
      throw new RequestValidationError([
        { path: 'header.idempotency-key', message: 'must be 1-255 visible ASCII characters' },
      ]);
    return this.db.transaction(async (tx) => {
      if (!(await this.keys.claim(tx, tenantId, key, hash))) {
        const row = await this.keys.find(tx, tenantId, key);
        const decision = decideIdempotency(
          row ? { requestHash: row.requestHash, status: row.status, body: row.body } : null,
          hash,
        );
        if (decision.kind === 'mismatch')
          throw new IdempotencyKeyReusedError(
            'this Idempotency-Key was already used with a different request; use a new key',
          );
        if (decision.kind === 'replay')
          return {
            status: decision.status,
            body: decision.body,
            ...(row?.correlationId ? { correlationId: row.correlationId } : {}),
            replayed: true,
          };
      }
      const response = await handler(tx);
      await this.keys.complete(tx, tenantId, key, {
        status: response.status,
        body: redact(response.body),
        correlationId: response.correlationId ?? null,
      });
      return response;
    });
  }
}
