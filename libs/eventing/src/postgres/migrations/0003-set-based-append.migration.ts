import type { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_BATCH_SIGNATURE, schemaOf } from './schema';
import { AppendFunction1732900000001 } from './0002-append-function.migration';

/**
 * `append_batch`, set-based: the same signature, results and guarantees as migration 0002's, with
 * a constant number of statements per call instead of three statements and a subtransaction per
 * append (measured: ~0.4 ms of Postgres per append, so a call of 64 took ~25 ms and capped a
 * writer at ~2,500 appends/s whatever the batching). In one call:
 *
 * 1. one query reads the current version of every stream named;
 * 2. the appends are planned in order, in memory: an append whose expected version (NULL = any)
 *    matches the stream's version — as the earlier appends of the call leave it — gets the next
 *    versions; the others are rejected with the version they met;
 * 3. one INSERT writes every planned event, `ON CONFLICT DO NOTHING`: an event that a concurrent
 *    transaction's committed append (same stream and version) or an existing event id blocks is
 *    skipped — Postgres waits for the other transaction, as the unique violation did;
 * 4. an append missing any of its events is rejected whole: the rows it did write are deleted, with
 *    those of the later appends of the same stream in the call (planned on top of it), and the
 *    version it met is read again;
 * 5. one INSERT writes the outbox rows of the events kept, in event order.
 *
 * Each append is still all or nothing, versions stay contiguous, and a rejection never touches the
 * other streams of the call.
 */
export class SetBasedAppend1732900000002 implements MigrationInterface {
  readonly name = 'SetBasedAppend1732900000002';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(setBasedAppendFunction(schemaOf(runner), { planPerCall: false }));
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP FUNCTION IF EXISTS "${schemaOf(runner)}".append_batch`);
    await new AppendFunction1732900000001().up(runner);
  }
}

/**
 * The set-based `append_batch` of schema `s`. `planPerCall: false` is migration 0003's function;
 * `true` is 0004's, which has every statement that reads `events` planned at each call (see there);
 * `genericPlans` (with `planPerCall: false`) is 0005's, whose statements are planned once per
 * connection, never with a sequential scan of `events` (see there); `privateEvents` with it is
 * 0006's, which writes no outbox row for an event without a subject (a service-private event).
 */
export const setBasedAppendFunction = (
  s: string,
  {
    planPerCall,
    genericPlans = false,
    privateEvents = false,
  }: { planPerCall: boolean; genericPlans?: boolean; privateEvents?: boolean },
): string => {
  if (planPerCall && genericPlans)
    throw new Error('append_batch: planPerCall and genericPlans exclude each other');
  // The current version of each stream in $1, as two parallel arrays.
  const versionsOf = `SELECT coalesce(array_agg(v.stream_id), '{}'), coalesce(array_agg(v.version), '{}')
                  FROM (SELECT e.stream_id, max(e.stream_version) AS version
                          FROM "${s}".events e WHERE e.stream_id = ANY($1) GROUP BY e.stream_id) v`;
  return `
      CREATE OR REPLACE FUNCTION "${s}".append_batch${APPEND_BATCH_SIGNATURE}
      LANGUAGE plpgsql${genericPlans ? ' SET plan_cache_mode = force_generic_plan SET enable_seqscan = off' : ''} AS $fn$
      DECLARE
        n int := coalesce(array_length(p_streams, 1), 0);
        k_streams text[];
        k_versions int[];
        a int;
        j int;
        k int;
        cur int;
        first_event int := 1;
        a_first int[] := '{}';
        a_current int[] := '{}';
        a_ok boolean[] := '{}';
        ev_index int[] := '{}';
        ev_version int[] := '{}';
        ev_stream text[] := '{}';
        ins_ids uuid[];
        ins_positions bigint[];
        failed_streams text[] := '{}';
        drop_ids uuid[] := '{}';
        keep_index int[] := '{}';
        out_a int[] := '{}';
        out_cur int[] := '{}';
        out_pos bigint[] := '{}';
        out_ver int[] := '{}';${
          planPerCall
            ? `
        f_streams text[] := '{}';
        f_versions int[] := '{}';`
            : ''
        }
      BEGIN
        IF n = 0 THEN
          RETURN;
        END IF;
        -- 1. Where every stream named stands now.${
          planPerCall
            ? `
        EXECUTE $q$${versionsOf}$q$ INTO k_streams, k_versions USING p_streams;`
            : `
        SELECT coalesce(array_agg(v.stream_id), '{}'), coalesce(array_agg(v.version), '{}')
          INTO k_streams, k_versions
          FROM (SELECT e.stream_id, max(e.stream_version) AS version
                  FROM "${s}".events e WHERE e.stream_id = ANY(p_streams) GROUP BY e.stream_id) v;`
        }
        -- 2. Plan in order: each append sees the streams as the earlier appends leave them.
        FOR a IN 1 .. n LOOP
          k := array_position(k_streams, p_streams[a]);
          IF k IS NULL THEN
            k_streams := k_streams || p_streams[a];
            k_versions := k_versions || 0;
            k := array_length(k_streams, 1);
          END IF;
          cur := k_versions[k];
          a_first := a_first || first_event;
          a_current := a_current || cur;
          IF p_expected[a] IS NULL OR p_expected[a] = cur THEN
            a_ok := a_ok || true;
            FOR j IN 0 .. p_counts[a] - 1 LOOP
              ev_index := ev_index || (first_event + j);
              ev_version := ev_version || (cur + j + 1);
              ev_stream := ev_stream || p_streams[a];
            END LOOP;
            k_versions[k] := cur + p_counts[a];
          ELSE
            a_ok := a_ok || false;
          END IF;
          first_event := first_event + p_counts[a];
        END LOOP;
        -- 3. Every planned event in one statement; what a committed rival or a known id blocks is skipped.
        WITH ins AS (
          INSERT INTO "${s}".events AS e
            (stream_id, stream_version, event_id, type, version, data, correlation_id, causation_id, trace, occurred_at)
          SELECT x.stream_id, x.version, p_ids[x.i], p_types[x.i], p_versions[x.i], p_data[x.i],
                 p_correlation[x.i], p_causation[x.i], p_traces[x.i], p_occurred[x.i]
            FROM unnest(ev_index, ev_version, ev_stream) WITH ORDINALITY AS x(i, version, stream_id, ord)
           ORDER BY x.ord
          ON CONFLICT DO NOTHING
          RETURNING e.event_id, e.global_position)
        SELECT coalesce(array_agg(ins.event_id), '{}'), coalesce(array_agg(ins.global_position), '{}')
          INTO ins_ids, ins_positions FROM ins;
        -- 4. An append missing an event is rejected whole, and so is every later one of its stream.
        FOR a IN 1 .. n LOOP
          IF a_ok[a] THEN
            IF p_streams[a] = ANY(failed_streams) THEN
              a_ok[a] := false;
            ELSE
              FOR j IN a_first[a] .. a_first[a] + p_counts[a] - 1 LOOP
                IF NOT (p_ids[j] = ANY(ins_ids)) THEN
                  a_ok[a] := false;
                  failed_streams := failed_streams || p_streams[a];
                  EXIT;
                END IF;
              END LOOP;
            END IF;
          END IF;
          FOR j IN a_first[a] .. a_first[a] + p_counts[a] - 1 LOOP
            IF a_ok[a] THEN
              keep_index := keep_index || j;
              out_a := out_a || a;
              out_cur := out_cur || a_current[a];
              out_pos := out_pos || ins_positions[array_position(ins_ids, p_ids[j])];
              out_ver := out_ver || (a_current[a] + (j - a_first[a] + 1));
            ELSIF p_ids[j] = ANY(ins_ids) THEN
              drop_ids := drop_ids || p_ids[j];
            END IF;
          END LOOP;
          IF NOT a_ok[a] THEN
            out_a := out_a || a;
            -- Rejected after planning: the version it met is read again below (a rival committed it).
            out_cur := out_cur || CASE WHEN p_streams[a] = ANY(failed_streams) THEN NULL ELSE a_current[a] END;
            out_pos := out_pos || NULL::bigint;
            out_ver := out_ver || NULL::int;
          END IF;
        END LOOP;
        IF array_length(drop_ids, 1) > 0 THEN${
          planPerCall
            ? `
          EXECUTE $q$DELETE FROM "${s}".events e WHERE e.event_id = ANY($1)$q$ USING drop_ids;`
            : `
          DELETE FROM "${s}".events e WHERE e.event_id = ANY(drop_ids);`
        }
        END IF;
        -- 5. The outbox rows of the events kept, in event order${privateEvents ? ' (a private event, without a subject, has none)' : ''}.
        INSERT INTO "${s}".outbox (event_id, subject, type, version, trace)
          SELECT p_ids[x.i], p_subjects[x.i], p_types[x.i], p_versions[x.i], p_traces[x.i]
            FROM unnest(keep_index) WITH ORDINALITY AS x(i, ord)${
              privateEvents
                ? `
           WHERE p_subjects[x.i] IS NOT NULL`
                : ''
            }
           ORDER BY x.ord;
        ${
          planPerCall
            ? `-- The versions that rejected appends met, read again once for all of them.
        IF array_length(failed_streams, 1) > 0 THEN
          EXECUTE $q$${versionsOf}$q$ INTO f_streams, f_versions USING failed_streams;
        END IF;
        RETURN QUERY
          SELECT o.a, coalesce(o.cur, f_versions[array_position(f_streams, p_streams[o.a])], 0),
                 o.pos, o.ver
            FROM unnest(out_a, out_cur, out_pos, out_ver) WITH ORDINALITY AS o(a, cur, pos, ver, ord)
           ORDER BY o.ord;`
            : `RETURN QUERY
          SELECT o.a, coalesce(o.cur, (SELECT coalesce(max(e.stream_version), 0)
                                         FROM "${s}".events e WHERE e.stream_id = p_streams[o.a])),
                 o.pos, o.ver
            FROM unnest(out_a, out_cur, out_pos, out_ver) WITH ORDINALITY AS o(a, cur, pos, ver, ord)
           ORDER BY o.ord;`
        }
      END
      $fn$`;
};
