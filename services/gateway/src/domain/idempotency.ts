/**
 * Idempotency-Key semantics (draft-ietf-httpapi-idempotency-key-header): the first request with a
 * key runs and its response is stored with a hash of the request; a replay with the same request gets
 * the stored response; the same key with another request is refused (422).
 */
export interface StoredIdempotentResponse {
  readonly requestHash: string;
  readonly status: number;
  readonly body: unknown;
}

export type IdempotencyDecision =
  | { readonly kind: 'proceed' }
  | { readonly kind: 'replay'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'mismatch' };

export const decideIdempotency = (
  stored: StoredIdempotentResponse | null,
  requestHash: string,
): IdempotencyDecision => {
  if (stored === null) return { kind: 'proceed' };
  if (stored.requestHash !== requestHash) return { kind: 'mismatch' };
  return { kind: 'replay', status: stored.status, body: stored.body };
};

/** A key clients may send: 1–255 visible ASCII characters (no spaces). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
