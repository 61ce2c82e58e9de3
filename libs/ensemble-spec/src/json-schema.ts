import { z } from 'zod';
import { EnsembleSpecSourceSchema, specDocs } from './source.schema';

/** Where the published schema lives; editors resolve `$id` and the yaml-language-server comment to it. */
export const JSON_SCHEMA_ID = 'https://gpunet.io/schemas/ensemble-spec/v1.json';

/**
 * The JSON Schema dialects the schema is generated in: draft-07 is what editors' YAML/JSON language
 * servers support best (the published file); 2020-12 is the dialect of OpenAPI 3.1, which embeds it.
 */
export type SpecSchemaDialect = 'draft-7' | 'draft-2020-12';

/**
 * The JSON Schema of the source format, generated from the very zod schema that validates specs.
 * Cross-field rules (per-node × nodes ≥ count, …) cannot be expressed in it; the parser checks them.
 * Published in draft-07 as `docs/ensemble-spec.schema.json`; its shared parts are in `definitions`
 * (draft-07) or `$defs` (2020-12), the root a `$ref` to one of them.
 */
export const ensembleSpecJsonSchema = (dialect: SpecSchemaDialect = 'draft-7'): Record<string, unknown> => {
  const generated = z.toJSONSchema(EnsembleSpecSourceSchema, {
    io: 'input',
    target: dialect,
    metadata: specDocs,
    unrepresentable: 'any',
    override: (ctx) => {
      // `nunet` is documentation for the mapping table, not a JSON Schema keyword.
      delete (ctx.jsonSchema as Record<string, unknown>).nunet;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, $id: JSON_SCHEMA_ID, ...rest };
};
