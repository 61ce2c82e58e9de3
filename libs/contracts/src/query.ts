import type { z } from 'zod';
import { prefixSubject } from './subject';

/**
 * A request/reply query over core NATS (not JetStream: queries are answered from projections and
 * are not stored). Request and response schemas are defined once, here, like events.
 */
export interface QueryDefinition<
  N extends string = string,
  Req extends z.ZodType = z.ZodType,
  Res extends z.ZodType = z.ZodType,
> {
  readonly kind: 'query';
  readonly name: N;
  readonly version: number;
  readonly request: Req;
  readonly response: Res;
  readonly description: string;
  /** `q.<name>.v<N>` inside the namespace. */
  subject(prefix?: string): string;
}

export type QueryRequest<Q> = Q extends QueryDefinition<string, infer Req> ? z.input<Req> : never;
export type QueryResponse<Q> =
  Q extends QueryDefinition<string, z.ZodType, infer Res> ? z.output<Res> : never;

export const defineQuery = <const N extends string, Req extends z.ZodType, Res extends z.ZodType>(input: {
  readonly name: N;
  readonly version: number;
  readonly request: Req;
  readonly response: Res;
  readonly description: string;
}): QueryDefinition<N, Req, Res> =>
  Object.freeze({
    kind: 'query' as const,
    ...input,
    subject: (prefix = '') => prefixSubject(prefix, `q.${input.name}.v${input.version}`),
  });
