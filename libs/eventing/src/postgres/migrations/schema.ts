import type { QueryRunner } from 'typeorm';

/**
 * The service's schema a migration runs in (`DataSource.options.schema`, which `Database` always
 * sets): the eventing tables' migrations and every service's own use it.
 */
export const schemaOf = (runner: QueryRunner): string => {
  const schema = (runner.connection.options as { schema?: string }).schema;
  if (schema === undefined) throw new Error('a migration needs DataSource.options.schema');
  return schema;
};

/** `append_batch`'s parameters and result (migrations 0002–0005 define its body). */
export const APPEND_BATCH_SIGNATURE = `(
        p_streams text[], p_expected int[], p_counts int[],
        p_ids uuid[], p_types text[], p_versions int[], p_data jsonb[], p_correlation text[],
        p_causation text[], p_occurred timestamptz[], p_subjects text[], p_traces jsonb[])
      RETURNS TABLE (out_append int, out_current int, out_position bigint, out_version int)`;
