import { z } from 'zod';
import { ProblemSchema } from './api.schemas';
import { API_OPERATIONS, type ApiOperation } from './api.operations';

type JsonSchema = Record<string, unknown>;

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

/** The response header of a request that starts a chain (`ApiOperation.startsChain`). */
const CORRELATION_HEADER = {
  'X-Correlation-Id': {
    description:
      "This request's id (UUIDv7): the correlation and cause of the events it appended, and the " +
      'correlation of every event that follows from them. A replay gives the first request’s.',
    schema: { type: 'string', format: 'uuid' },
  },
};
const PROBLEM = 'application/problem+json';

/** Reusable schemas (`.meta({ id })`) land in components; the rest inline. */
const registry = z.globalRegistry;

/**
 * Moves a generated JSON Schema's `$defs` into `components` (its `#/$defs/` references rewritten to
 * point there), so that every `$ref` in the document is internal. A name already taken by another
 * schema is an error: two shapes under one name would make generated clients pick one silently.
 */
const hoistDefs = (json: JsonSchema, components: Record<string, JsonSchema>): JsonSchema => {
  const moved = JSON.parse(
    JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  // `$schema` is the document's dialect (OpenAPI 3.1's); an `$id` would rebase the references.
  const { $defs, $schema: _schema, $id: _id, ...rest } = moved;
  for (const [id, def] of Object.entries($defs ?? {})) define(components, id, def);
  return rest;
};

const define = (components: Record<string, JsonSchema>, id: string, schema: JsonSchema): void => {
  const existing = components[id];
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(schema))
    throw new Error(`OpenAPI components: two different schemas are named ${id}`);
  components[id] = schema;
};

const schemaOf = (
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, JsonSchema>,
): JsonSchema => {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    metadata: registry,
  }) as JsonSchema;
  const rest = hoistDefs(json, components);
  // A schema with an id comes back as a reference to its own $defs entry, moved above.
  if (typeof rest['$ref'] === 'string') return rest;
  const id = registry.get(schema)?.id;
  if (typeof id === 'string') {
    const { id: _id, ...body } = rest;
    define(components, id, body);
    return { $ref: `#/components/schemas/${id}` };
  }
  return rest;
};

const parametersOf = (
  where: 'path' | 'query',
  shape: z.ZodObject | undefined,
  components: Record<string, JsonSchema>,
): JsonSchema[] => {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, field]) => {
    const f = field as z.ZodType;
    const optional = f.safeParse(undefined).success;
    const schema = schemaOf(f, 'input', components);
    const description = (schema as { description?: string }).description;
    return {
      name,
      in: where,
      required: where === 'path' || !optional,
      ...(description ? { description } : {}),
      schema,
    };
  });
};

const operationOf = (route: ApiOperation, components: Record<string, JsonSchema>): JsonSchema => {
  const parameters = [
    ...parametersOf('path', route.params, components),
    ...parametersOf('query', route.query, components),
    ...(route.idempotent
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'Retries with the same key and body get the first response; another body gets 422.',
            schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
          },
        ]
      : []),
  ];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(route.responses)) {
    const type = r.contentType ?? (Number(status) >= 400 ? PROBLEM : 'application/json');
    const schema = r.schema
      ? schemaOf(r.schema, 'output', components)
      : type === PROBLEM
        ? PROBLEM_REF
        : undefined;
    const succeeded = Number(status) >= 200 && Number(status) < 300;
    responses[status] = {
      description: r.description,
      ...(route.startsChain && succeeded ? { headers: CORRELATION_HEADER } : {}),
      ...(Number(status) === 204 ? {} : { content: { [type]: schema ? { schema } : {} } }),
    };
  }
  const common: Record<string, string> = {
    default: 'an error (RFC 9457 problem details)',
  };
  if (route.scope !== null) {
    common['401'] = 'missing or invalid API key';
    common['403'] = `the API key lacks the \`${route.scope}\` scope`;
    common['429'] = 'rate limited (Retry-After)';
  }
  if (route.body || route.params || route.query) common['400'] ??= 'invalid request';
  if (route.body) common['413'] = 'body too large';
  if (route.idempotent) common['422'] = 'Idempotency-Key reused with another request';
  for (const [status, description] of Object.entries(common))
    responses[status] ??= { description, content: { [PROBLEM]: { schema: PROBLEM_REF } } };
  let requestBody: JsonSchema | undefined;
  if (route.body && 'jsonSchema' in route.body) {
    const schema = hoistDefs(route.body.jsonSchema, components);
    requestBody = {
      required: true,
      content: Object.fromEntries(route.body.contentTypes.map((t) => [t, { schema }])),
    };
  } else if (route.body) {
    requestBody = {
      required: route.body.required,
      content: { 'application/json': { schema: schemaOf(route.body.schema, 'input', components) } },
    };
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.scope === null ? { security: [] } : { security: [{ apiKey: [] }], 'x-scope': route.scope }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
};

export const API_VERSION = '1.0.0';

/** The OpenAPI 3.1 document of the gateway, generated from its operations and their zod schemas. */
export const buildOpenApiDocument = (): JsonSchema => {
  const components: Record<string, JsonSchema> = {};
  schemaOf(ProblemSchema, 'output', components);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of API_OPERATIONS) {
    paths[route.path] ??= {};
    paths[route.path]![route.method] = operationOf(route, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'gpunet gateway',
      version: API_VERSION,
      description:
        'Submit and follow jobs, browse providers, manage subnets and accounts. Authenticate with ' +
        '`Authorization: Bearer <api key>`. Errors are RFC 9457 problem details.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(API_OPERATIONS.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'gpn_<id>_<secret>' } },
    },
  };
};
