import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { components } from './gateway-api.generated';
import { GATEWAY_API_COMPONENTS } from './gateway-api.schemas.generated';

/*
 * What the CLI reads of the gateway's answers: the OpenAPI document's schemas, declared once in the
 * gateway (its zod schemas → docs/openapi.json → `gateway-api.generated.ts`). Answers are checked
 * at the boundary against the same document, so a gateway of another version or a proxy's page ends
 * the command with exit 1 and the field at fault, never with a crash while printing.
 */

/** The gateway's schemas by their OpenAPI component name (`Job`, `JobList`, …). */
export type ApiSchemas = components['schemas'];
export type ApiSchemaName = keyof ApiSchemas;
export type Job = ApiSchemas['Job'];

/**
 * The components with `additionalProperties: false` dropped: the gateway's answers are closed
 * objects today, but a later gateway may add fields (a published shape only gains optional ones);
 * the CLI lets them through (to `--json`) rather than refuse a newer gateway.
 */
const openComponents = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(openComponents);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => !(k === 'additionalProperties' && v === false))
      .map(([k, v]) => [k, openComponents(v)]),
  );
};

let ajv: Ajv2020 | undefined;
const validators = new Map<ApiSchemaName, ValidateFunction>();

/** The validator of one component, compiled on first use (most commands need one or two). */
const validatorOf = (name: ApiSchemaName): ValidateFunction => {
  let validate = validators.get(name);
  if (validate) return validate;
  if (!ajv) {
    // Formats (`uuid`, `date-time`) are descriptions here: the CLI does not parse those fields.
    ajv = new Ajv2020({ strict: true, validateFormats: false });
    // `components` is OpenAPI's, not a JSON Schema keyword: declared so strict mode lets it hold the schemas.
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'openapi.json', components: openComponents(GATEWAY_API_COMPONENTS) });
  }
  validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
  if (!validate) throw new Error(`docs/openapi.json has no schema ${name}`);
  validators.set(name, validate);
  return validate;
};

/** A job's statuses, in the order the document lists them (for `job ls --status`). */
export const JOB_STATUSES = (
  GATEWAY_API_COMPONENTS as {
    schemas: { Job: { properties: { status: { enum: readonly Job['status'][] } } } };
  }
).schemas.Job.properties.status.enum;

/** A field at fault: its dotted path (empty for the body itself) and what is wrong with it. */
export interface ResponseIssue {
  readonly path: string;
  readonly message: string;
}

const issueOf = (e: ErrorObject): ResponseIssue => {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return { path: [...path, missing].join('.'), message: 'missing' };
  }
  return { path: path.join('.'), message: e.message ?? e.keyword };
};

/** `body` as the schema `name`, or the first field at fault. */
export const checkResponse = <N extends ApiSchemaName>(
  name: N,
  body: unknown,
):
  | { readonly ok: true; readonly value: ApiSchemas[N] }
  | { readonly ok: false; readonly issue?: ResponseIssue } => {
  const validate = validatorOf(name);
  if (validate(body)) return { ok: true, value: body as ApiSchemas[N] };
  const first = validate.errors?.[0];
  return first ? { ok: false, issue: issueOf(first) } : { ok: false };
};
