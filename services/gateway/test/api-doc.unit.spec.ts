import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_DOC_PATH, formattedApiMarkdown } from '../scripts/api-doc';
import { buildOpenApiDocument } from '../src/app/http/openapi';
import { API_OPERATIONS } from '../src/app/http/api.operations';

describe('API documents', () => {
  it('docs/api.md is generated from the current OpenAPI document (run scripts/generate-api-doc.ts)', async () => {
    expect(readFileSync(API_DOC_PATH, 'utf8')).toBe(await formattedApiMarkdown());
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
    // Every $ref resolves.
    const text = JSON.stringify(doc);
    const schemas = (doc as unknown as { components: { schemas: Record<string, unknown> } }).components
      .schemas;
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas).toHaveProperty(name!);
  });
});
