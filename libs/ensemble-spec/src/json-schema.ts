import { z } from 'zod';
import { EnsembleSpecSourceSchema, specDocs } from './source.schema';

/** Where the published schema lives; editors resolve `$id` and the yaml-language-server comment to it. */
export const JSON_SCHEMA_ID = 'https://gpunet.io/schemas/ensemble-spec/v1.json';

/**
 * The JSON Schema (draft-07, the dialect editors' YAML/JSON language servers support best) of the
 * source format, generated from the very zod schema that
 * validates specs. Cross-field rules (per-node × nodes ≥ count, …) cannot be expressed in it; the
 * parser checks them. Published as `docs/ensemble-spec.schema.json`.
 */
export const ensembleSpecJsonSchema = (): Record<string, unknown> => {
  const generated = z.toJSONSchema(EnsembleSpecSourceSchema, {
    io: 'input',
    target: 'draft-7',
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
