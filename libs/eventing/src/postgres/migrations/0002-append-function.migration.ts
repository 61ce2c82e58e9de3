import type { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_BATCH_SIGNATURE, schemaOf } from './schema';

/**
 * `append_batch`: appends of several streams in one call and one commit (ADR 0001, "group commit").
 * Per append, in order: read the stream's version; if it is the expected one (NULL = any), insert
 * its events and their outbox rows in a subtransaction. A version mismatch, or a unique violation
 * (a concurrent append won the race), rejects that append alone — the others still commit. Returns
 * one row per appended event `(append, current, position, version)`, or one row with NULL position
 * for a rejected append. A server-side function also caches its plans per connection, which
 * planning a CTE on every call did not (measured: planning cost more than running).
 */
export class AppendFunction1732900000001 implements MigrationInterface {
  readonly name = 'AppendFunction1732900000001';

  async up(runner: QueryRunner): Promise<void> {
    const s = schemaOf(runner);
    await runner.query(`
      CREATE FUNCTION "${s}".append_batch${APPEND_BATCH_SIGNATURE}
      LANGUAGE plpgsql AS $fn$
      DECLARE
        a int;
        v_current int;
        v_first int := 1;
        v_last int;
        v_positions bigint[];
        v_versions int[];
      BEGIN
        FOR a IN 1 .. coalesce(array_length(p_streams, 1), 0) LOOP
          v_last := v_first + p_counts[a] - 1;
          SELECT coalesce(max(e.stream_version), 0) INTO v_current FROM "${s}".events e WHERE e.stream_id = p_streams[a];
          v_positions := NULL;
          IF p_expected[a] IS NULL OR v_current = p_expected[a] THEN
            BEGIN
              WITH ins AS (
                INSERT INTO "${s}".events AS e
                  (stream_id, stream_version, event_id, type, version, data, correlation_id, causation_id, trace, occurred_at)
                SELECT p_streams[a], v_current + (i - v_first + 1), p_ids[i], p_types[i], p_versions[i], p_data[i],
                       p_correlation[i], p_causation[i], p_traces[i], p_occurred[i]
                FROM generate_series(v_first, v_last) AS i ORDER BY i
                RETURNING e.global_position, e.stream_version)
              SELECT array_agg(ins.global_position ORDER BY ins.stream_version), array_agg(ins.stream_version ORDER BY ins.stream_version)
                INTO v_positions, v_versions FROM ins;
              INSERT INTO "${s}".outbox (event_id, subject, type, version, trace)
                SELECT p_ids[i], p_subjects[i], p_types[i], p_versions[i], p_traces[i]
                FROM generate_series(v_first, v_last) AS i ORDER BY i;
            EXCEPTION WHEN unique_violation THEN
              -- A concurrent append took this version (or the event id exists): reject this append only.
              v_positions := NULL;
              SELECT coalesce(max(e.stream_version), 0) INTO v_current FROM "${s}".events e WHERE e.stream_id = p_streams[a];
            END;
          END IF;
          IF v_positions IS NULL THEN
            RETURN QUERY SELECT a, v_current, NULL::bigint, NULL::int;
          ELSE
            RETURN QUERY SELECT a, v_current, p.position, p.version FROM unnest(v_positions, v_versions) AS p(position, version);
          END IF;
          v_first := v_last + 1;
        END LOOP;
      END
      $fn$`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP FUNCTION IF EXISTS "${schemaOf(runner)}".append_batch`);
  }
}
