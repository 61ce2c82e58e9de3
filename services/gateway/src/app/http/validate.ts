import { toIssues } from '@gpunet/contracts';
import type { z } from 'zod';
import { RequestValidationError } from '../../domain/gateway.errors';

/** Parses a part of the request (`path`, `query`, `body`) or throws with every bad field's path. */
export const parseInput = <T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> => {
  const parsed = schema.safeParse(value ?? (where === 'body' ? undefined : {}));
  if (parsed.success) return parsed.data;
  throw new RequestValidationError(
    toIssues(parsed.error).map((i) => ({
      path: i.path === '' ? where : `${where}.${i.path}`,
      message: i.message,
    })),
  );
};

/** A JSON body (the raw text the gateway's content-type parsers keep), parsed and validated. */
export const parseJsonBody = <T extends z.ZodType>(
  schema: T,
  raw: unknown,
  required: boolean,
): z.output<T> => {
  const text = typeof raw === 'string' ? raw : '';
  if (text.trim() === '') {
    if (!required) return parseInput(schema, {}, 'body');
    throw new RequestValidationError([{ path: 'body', message: 'a JSON body is required' }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RequestValidationError([
      { path: 'body', message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` },
    ]);
  }
  return parseInput(schema, value, 'body');
};

/** A request that takes no body: one sent anyway is refused rather than ignored. */
export const requireNoBody = (raw: unknown): void => {
  if (typeof raw === 'string' && raw.trim() !== '')
    throw new RequestValidationError([{ path: 'body', message: 'this request takes no body' }]);
};
