import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  API_DOC_PATH,
  API_DOCUMENT_COMMAND,
  formattedApiMarkdown,
  formattedOpenApiJson,
  OPENAPI_PATH,
} from '../scripts/api-doc';
import { buildOpenApiDocument } from '../src/app/http/openapi';
import { API_OPERATIONS } from '../src/app/http/api.operations';

type Json = Record<string, unknown>;

/** Every `$ref` value anywhere in `value`, with where it stands. */
const refsIn = (value: unknown, at = '#'): { at: string; ref: string }[] => {
  if (Array.isArray(value)) return value.flatMap((v, i) => refsIn(v, `${at}/${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === '$ref' && typeof v === 'string' ? [{ at, ref: v }] : refsIn(v, `${at}/${k}`),
  );
};

const published = (): Json => JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Json;

/** Ajv (2020-12, strict) holding the document's components, addressed as `openapi.json#/components/schemas/<name>`. */
const componentsAjv = (doc: Json, options: { allErrors?: boolean; validateFormats?: boolean } = {}) => {
  const ajv = new Ajv2020({ strict: true, ...options });
  // `components` is OpenAPI's, not a JSON Schema keyword: declared so strict mode lets it hold the schemas.
  ajv.addKeyword('components');
  ajv.addSchema({ $id: 'openapi.json', components: doc['components'] });
  return ajv;
};

// Rendering and formatting the documents (Prettier over ~5,000 lines) takes seconds on a busy machine.
const GENERATE_TIMEOUT_MS = 60_000;

describe('API documents', () => {
  it(
    `docs/api.md is generated from the current OpenAPI document (run ${API_DOCUMENT_COMMAND})`,
    async () => {
      expect(readFileSync(API_DOC_PATH, 'utf8'), `docs/api.md is stale: run ${API_DOCUMENT_COMMAND}`).toBe(
        await formattedApiMarkdown(),
      );
    },
    GENERATE_TIMEOUT_MS,
  );

  it(
    `docs/openapi.json is the document the gateway serves (run ${API_DOCUMENT_COMMAND})`,
    async () => {
      expect(
        readFileSync(OPENAPI_PATH, 'utf8'),
        `docs/openapi.json is stale: run ${API_DOCUMENT_COMMAND}`,
      ).toBe(await formattedOpenApiJson());
    },
    GENERATE_TIMEOUT_MS,
  );

  it('docs/openapi.json is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(published());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('its schemas are JSON Schema 2020-12 (strict), and every $ref is internal and resolves', () => {
    const doc = published();
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter(({ ref }) => !ref.startsWith('#/components/schemas/'))).toEqual([]);
    const schemas = (doc['components'] as { schemas: Json }).schemas;
    for (const { at, ref } of refs)
      expect(schemas, `${at} → ${ref}`).toHaveProperty([ref.slice('#/components/schemas/'.length)]);
    const ajv = componentsAjv(doc, { validateFormats: false });
    for (const name of Object.keys(schemas))
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`), name).not.toThrow();
  });

  it('bundles the ensemble spec: the submission body accepts every example as the draft-07 schema does', () => {
    const doc = published() as { paths: Record<string, Record<string, Json>>; components: Json };
    const body = doc.paths['/v1/jobs']!['post']!['requestBody'] as {
      content: Record<string, { schema: Json }>;
    };
    expect(Object.keys(body.content)).toEqual(['application/yaml', 'application/json']);
    for (const { schema } of Object.values(body.content))
      expect(schema).toEqual({ $ref: '#/components/schemas/EnsembleSpec' });
    const ajv = componentsAjv(doc, { allErrors: true });
    const validate = ajv.getSchema('openapi.json#/components/schemas/EnsembleSpec')!;
    const examples = resolve(import.meta.dirname, '../../../docs/examples');
    const files = readdirSync(examples).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const spec = parse(readFileSync(resolve(examples, f), 'utf8')) as Json;
      expect(validate(spec) ? [] : validate.errors, f).toEqual([]);
      // A typo the editors' schema rejects is rejected here too.
      expect(validate({ ...spec, budgte: {} }), `${f} with an unknown field`).toBe(false);
    }
  });

  it('documents every route, each POST with Idempotency-Key and each keyed route with 401/403/429', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    for (const route of API_OPERATIONS) {
      const op = doc.paths[route.path]?.[route.method];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      const responses = Object.keys(op!['responses'] as object);
      if (route.scope !== null) expect(responses).toEqual(expect.arrayContaining(['401', '403', '429']));
      if (route.method === 'post') expect(JSON.stringify(op!['parameters'])).toContain('Idempotency-Key');
    }
  });
});
