/**
 * The event store's tables and its append function, as ordered migrations. Applied at startup by
 * PgEventStore.make; the same SQL runs on PostgreSQL 15+ and on embedded PGlite.
 */
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"

/** Error codes the append function raises (class "CA" is free for applications). */
export const WRONG_EXPECTED_VERSION = "CA001"
export const IDEMPOTENCY_CONFLICT = "CA002"

/** Encoding of ExpectedVersion in the function's `p_expected` array; n >= 0 means "exactly n" (0: no stream). */
export const EXPECT_ANY = -1n
export const EXPECT_STREAM_EXISTS = -2n

/** Appends that run inline projections hold this advisory lock shared; a rebuild holds it exclusively. */
export const INLINE_PROJECTIONS_LOCK = 7_305_424_613_337_001n

const tables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE cairn_streams (
      stream_id text PRIMARY KEY,
      version bigint NOT NULL CHECK (version >= 0)
    )`
  yield* sql`
    CREATE TABLE cairn_events (
      global_position bigint GENERATED ALWAYS AS IDENTITY,
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      stream_id text NOT NULL,
      version bigint NOT NULL,
      event_id uuid NOT NULL,
      type text NOT NULL,
      data jsonb NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, version),
      CONSTRAINT cairn_events_event_id_key UNIQUE (event_id)
    )`
  // The global log's order, and the cursor of every catch-up reader (docs/event-store.md).
  yield* sql`CREATE UNIQUE INDEX cairn_events_log_order ON cairn_events (transaction_id, global_position)`
  yield* sql`
    CREATE TABLE cairn_checkpoints (
      name text PRIMARY KEY,
      transaction_id xid8 NOT NULL,
      global_position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})

/**
 * One round trip per append: the idempotency check, a guarded version bump per stream (which also serialises
 * writers of one stream, so `Any` never fails on contention) and the insert. Any refusal raises, so a
 * multi-stream append that fails on its second stream leaves nothing of its first.
 */
const appendFunction = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION cairn_append(
      p_streams text[], p_expected int8[], p_counts int4[], p_event_streams text[],
      p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[], p_lock_inline bool
    ) RETURNS TABLE (r_global_position int8, r_transaction_id int8, r_version int8, r_recorded_at timestamptz, r_duplicate bool)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_total int := coalesce(cardinality(p_ids), 0);
      v_found int;
      v_same int;
      v_offset int := 0;
      v_count int;
      v_expected int8;
      v_version int8;
    BEGIN
      IF p_lock_inline THEN
        PERFORM pg_advisory_xact_lock_shared(${INLINE_PROJECTIONS_LOCK});
      END IF;
      IF v_total > 0 THEN
        SELECT count(*), count(*) FILTER (WHERE e.stream_id = x.stream_id) INTO v_found, v_same
          FROM unnest(p_ids, p_event_streams) AS x(event_id, stream_id)
          JOIN cairn_events e ON e.event_id = x.event_id;
        IF v_found > 0 THEN
          IF v_found = v_total AND v_same = v_total THEN
            RETURN QUERY SELECT e.global_position, e.transaction_id::text::int8, e.version, e.recorded_at, true
              FROM unnest(p_ids) WITH ORDINALITY AS x(event_id, ord)
              JOIN cairn_events e ON e.event_id = x.event_id
              ORDER BY x.ord;
            RETURN;
          END IF;
          RAISE EXCEPTION 'append overlaps committed events' USING ERRCODE = '${IDEMPOTENCY_CONFLICT}',
            DETAIL = (SELECT string_agg(e.event_id::text, ',') FROM cairn_events e WHERE e.event_id = ANY (p_ids));
        END IF;
      END IF;
      FOR i IN 1 .. coalesce(cardinality(p_streams), 0) LOOP
        v_count := p_counts[i];
        v_expected := p_expected[i];
        v_version := NULL;
        IF v_expected = ${EXPECT_ANY} THEN
          INSERT INTO cairn_streams AS s (stream_id, version) VALUES (p_streams[i], v_count)
            ON CONFLICT (stream_id) DO UPDATE SET version = s.version + v_count
            RETURNING s.version INTO v_version;
        ELSIF v_expected = ${EXPECT_STREAM_EXISTS} THEN
          UPDATE cairn_streams AS s SET version = s.version + v_count
            WHERE s.stream_id = p_streams[i] AND s.version > 0
            RETURNING s.version INTO v_version;
        ELSIF v_expected = 0 THEN
          INSERT INTO cairn_streams AS s (stream_id, version) VALUES (p_streams[i], v_count)
            ON CONFLICT (stream_id) DO UPDATE SET version = s.version + v_count WHERE s.version = 0
            RETURNING s.version INTO v_version;
        ELSE
          UPDATE cairn_streams AS s SET version = s.version + v_count
            WHERE s.stream_id = p_streams[i] AND s.version = v_expected
            RETURNING s.version INTO v_version;
        END IF;
        IF v_version IS NULL THEN
          RAISE EXCEPTION 'wrong expected version' USING ERRCODE = '${WRONG_EXPECTED_VERSION}',
            DETAIL = json_build_object(
              'stream', p_streams[i],
              'actual', coalesce((SELECT s.version FROM cairn_streams s WHERE s.stream_id = p_streams[i]), 0)
            )::text;
        END IF;
        IF v_count > 0 THEN
          RETURN QUERY WITH inserted AS (
            INSERT INTO cairn_events AS e (stream_id, version, event_id, type, data, metadata)
            SELECT p_streams[i], v_version - v_count + x.ord, x.event_id, x.type, x.data, x.metadata
              FROM unnest(
                p_ids[v_offset + 1 : v_offset + v_count],
                p_types[v_offset + 1 : v_offset + v_count],
                p_data[v_offset + 1 : v_offset + v_count],
                p_metadata[v_offset + 1 : v_offset + v_count]
              ) WITH ORDINALITY AS x(event_id, type, data, metadata, ord)
              ORDER BY x.ord
            RETURNING e.global_position, e.transaction_id, e.version, e.recorded_at
          )
          SELECT n.global_position, n.transaction_id::text::int8, n.version, n.recorded_at, false
            FROM inserted n ORDER BY n.version;
        END IF;
        v_offset := v_offset + v_count;
      END LOOP;
    END
    $fn$`)
})

export const migrations = Migrator.fromRecord({
  "0001_event_store_tables": tables,
  "0002_append_function": appendFunction
})

/** Applies pending migrations; safe to run at every start and from several nodes at once. */
export const migrate = Migrator.make({})({ loader: migrations, table: "cairn_event_store_migrations" })
