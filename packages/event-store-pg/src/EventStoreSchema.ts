/**
 * The event store's tables, as ordered migrations. Applied at startup by
 * PgEventStore.make; the same SQL runs on PostgreSQL 15+ and on embedded PGlite.
 */
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"

/** The event-id constraint: hitting it means a retried append (see PgEventStore's refusal handling). */
export const EVENT_ID_CONSTRAINT = "cairn_events_event_id_key"

/** The `(stream_id, version)` primary key: hitting it means another writer took the version first. */
export const VERSION_CONSTRAINT = "cairn_events_pkey"

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
      CONSTRAINT ${sql.literal(EVENT_ID_CONSTRAINT)} UNIQUE (event_id)
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

// A stream's version is now the highest version among its events (the primary key answers it), so the table
// that kept it separately goes: one row less to write per append (decision 0029).
const streamVersionsFromEvents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TABLE IF EXISTS cairn_streams`
})

// The fingerprint of the inline projections' setup SQL last run here, so a start skips it when unchanged (InlineSetup.ts).
const inlineSetupFingerprint = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE cairn_inline_setup (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      fingerprint text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})

export const migrations = Migrator.fromRecord({
  "0001_event_store_tables": tables,
  "0002_stream_versions_from_events": streamVersionsFromEvents,
  "0003_inline_setup_fingerprint": inlineSetupFingerprint
})

/** Applies pending migrations; safe to run at every start and from several nodes at once. */
export const migrate = Migrator.make({})({ loader: migrations, table: "cairn_event_store_migrations" })
