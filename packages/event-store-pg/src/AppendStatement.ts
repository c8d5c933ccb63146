/**
 * The SQL that writes appends (decision 0004, revised by 0029). A stream's version is the highest `version` of its
 * events, read through the `(stream_id, version)` primary key (one backward index probe), and the events are
 * inserted right after it, guarded by the expectation. No other row is written: the primary key is what refuses a
 * second writer of the same version (it waits for the first to commit, then fails with a unique violation).
 *
 * A guard that refuses inserts nothing and returns no row; the caller classifies why afterwards.
 */
import type { Append, ExpectedVersion } from "@cairn/event-store"
import type { SqlClient } from "effect/sql"

/** The largest version a guard's range needs (Number.MAX_SAFE_INTEGER, far beyond any stream). */
const unbounded = Number.MAX_SAFE_INTEGER

/** An expectation as the range of current versions it accepts, so one statement text serves every kind. */
export const acceptedRange = (expected: ExpectedVersion.ExpectedVersion): readonly [low: number, high: number] => {
  switch (expected._tag) {
    case "Any":
      return [0, unbounded]
    case "NoStream":
      return [0, 0]
    case "StreamExists":
      return [1, unbounded]
    case "Exact":
      return [expected.version, expected.version]
  }
}

/** What a one-stream append needs back: its first version and each event's position, in one row. */
export interface WrittenStream {
  /** The version of the append's first event; the others follow it one by one. */
  readonly version: bigint
  readonly transaction_id: bigint
  readonly recorded_at: Date
  /** The first event's global position, and */
  readonly global_position: bigint
  /** the positions of all the events in version order when they are not consecutive (null when they are). */
  readonly positions: ReadonlyArray<bigint> | null
}

// Fixed text with numbered parameters (the stream is $1 twice): no template to compile per append, and the driver
// prepares it once. A lone event goes without arrays: plain parameters, no unnest; the version is read by the primary
// key's backward probe. `locked` takes the inline projections' lock ($8) first, as the batch statement does (below).
//
// The locked one is the commonest write of a server: one event to one stream, with the lock (every HTTP write). The
// batch statement's arrays, join and grouping cost more than the insert there: with this statement such appends ran at
// 0.91x raw on PostgreSQL instead of 0.75–0.81x, and 0.71x in PGlite instead of 0.53–0.56x (`bench:store` F, decision
// 0039).
const oneEventStatement = (locked: boolean) => `${
  locked ? "WITH held AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared($8::int8) AS held)\n  " : ""
}INSERT INTO cairn_events (stream_id, version, event_id, type, data, metadata)
  SELECT $1, c.version + 1, $2::uuid, $3, $4::jsonb, $5::jsonb
    FROM ${locked ? "held, " : ""}(SELECT coalesce(max(e.version), 0) AS version FROM cairn_events e WHERE e.stream_id = $1) c
   WHERE c.version BETWEEN $6 AND $7
  RETURNING stream_id, version, global_position, transaction_id::text::int8 AS transaction_id, recorded_at, NULL::int8[] AS positions`

const oneEvent = oneEventStatement(false)
const lockedOneEvent = oneEventStatement(true)

// Several events: ids and types as arrays, data and metadata each as one JSON array (joined texts, no array-literal
// escaping per event), zipped by ROWS FROM. One row comes back, not one per event: the events share the
// transaction and its timestamp, their versions follow each other, and so do their positions unless a concurrent
// writer drew from the sequence meanwhile, which `positions` then spells out.
const manyEvents = `WITH written AS (
    INSERT INTO cairn_events (stream_id, version, event_id, type, data, metadata)
    SELECT $1, c.version + x.ord, x.event_id, x.type, x.data, x.metadata
      FROM (SELECT coalesce(max(version), 0) AS version FROM cairn_events WHERE stream_id = $1) c,
        ROWS FROM (unnest($2::uuid[]), unnest($3::text[]), jsonb_array_elements($4::jsonb), jsonb_array_elements($5::jsonb))
          WITH ORDINALITY AS x(event_id, type, data, metadata, ord)
      WHERE c.version BETWEEN $6 AND $7
      ORDER BY x.ord
    RETURNING version, global_position, transaction_id, recorded_at
  )
  SELECT min(version) AS version, min(global_position) AS global_position,
      min(transaction_id::text::int8) AS transaction_id, min(recorded_at) AS recorded_at,
      CASE WHEN max(global_position) - min(global_position) = count(*) - 1 THEN NULL
        ELSE array_agg(global_position ORDER BY version) END AS positions
    FROM written HAVING count(*) > 0`

// A new stream's first event needs no version probe: version 1 can only be inserted when the stream has no events,
// and the primary key refuses it otherwise. Only for a statement that commits by itself: the refusal is an error,
// which would abort a caller's transaction where the guarded statement would only return no row.
const newStream = `INSERT INTO cairn_events (stream_id, version, event_id, type, data, metadata)
  VALUES ($1, 1, $2::uuid, $3, $4::jsonb, $5::jsonb)
  RETURNING version, global_position, transaction_id::text::int8 AS transaction_id, recorded_at, NULL::int8[] AS positions`

/**
 * A lone append that commits by itself: a single event to a stream expected not to exist is inserted as version 1
 * outright (a stream that exists fails it on the primary key, `VERSION_CONSTRAINT`); anything else is `writeStream`.
 */
export const writeStreamAlone = (sql: SqlClient.SqlClient, append: Append.PreparedStream) => {
  if (append.expected._tag !== "NoStream" || append.events.length !== 1) return writeStream(sql, append)
  const event = append.events[0]!
  return sql.unsafe<WrittenStream>(newStream, [append.stream, event.eventId, event.type, event.dataJson, event.metadataJson])
}

/** One stream's events after its current version, as one row, or no row when the guard refuses. */
export const writeStream = (sql: SqlClient.SqlClient, { stream, expected, events }: Append.PreparedStream) => {
  const [low, high] = acceptedRange(expected)
  if (events.length === 1) {
    const event = events[0]!
    return sql.unsafe<WrittenStream>(oneEvent, [stream, event.eventId, event.type, event.dataJson, event.metadataJson, low, high])
  }
  const ids = new Array<string>(events.length)
  const types = new Array<string>(events.length)
  const data = new Array<string>(events.length)
  const metadata = new Array<string>(events.length)
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    ids[i] = event.eventId
    types[i] = event.type
    data[i] = event.dataJson
    metadata[i] = event.metadataJson
  }
  return sql.unsafe<WrittenStream>(manyEvents, [stream, ids, types, `[${data.join(",")}]`, `[${metadata.join(",")}]`, low, high])
}

/** The global position of a stream's `i`th event in an append written as `row`. */
export const positionOf = (row: WrittenStream, i: number): bigint =>
  row.positions === null ? row.global_position + BigInt(i) : row.positions[i]!

// The batch's appends (in stream order) as arrays, their events as arrays zipped by ROWS FROM, data and metadata as
// one JSON array each. One row comes back per written append, shaped like a lone append's. Two variants add to it:
// `locked` takes the inline projections' lock (shared) in the statement itself, not as a statement of its own (a
// volatile function in a MATERIALIZED CTE that the appends are read through, so it runs once, before any insert);
// `atomic` inserts nothing unless every append's guard accepts (a multi-stream append: all or nothing).
//
// The appends' arrays are read through sub-selects so that the planner cannot see how long they are. Postgres plans a
// prepared statement anew at each execution while its custom plans look cheaper than its generic one; seeing the real
// count (1 or 2 streams) a custom plan always did, against the 10 rows a generic plan guesses, so every append paid
// for planning this statement: 0.25–0.4 ms of server CPU on PostgreSQL, more than running it, and more again in PGlite's
// WebAssembly. Blind to the count, both plans cost the same and the generic one is kept after the fifth execution
// (decision 0038).
const batchStatement = (locked: boolean, atomic: boolean) => `WITH ${
  locked ? "held AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared($10::int8) AS held), " : ""
}accepted AS (
    SELECT a.n, a.stream_id, c.version
      FROM ${locked ? "held, " : ""}unnest((SELECT $1::text[]), (SELECT $2::int8[]), (SELECT $3::int8[])) WITH ORDINALITY AS a(stream_id, low, high, n),
        LATERAL (SELECT coalesce(max(e.version), 0) AS version FROM cairn_events e WHERE e.stream_id = a.stream_id) c
     WHERE c.version BETWEEN a.low AND a.high
  ), written AS (
    INSERT INTO cairn_events (stream_id, version, event_id, type, data, metadata)
    SELECT s.stream_id, s.version + x.k, x.event_id, x.type, x.data, x.metadata
      FROM ROWS FROM (unnest($4::int8[]), unnest($5::int8[]), unnest($6::uuid[]), unnest($7::text[]),
          jsonb_array_elements($8::jsonb), jsonb_array_elements($9::jsonb)) AS x(n, k, event_id, type, data, metadata)
      JOIN accepted s ON s.n = x.n${atomic ? "\n      WHERE (SELECT count(*) FROM accepted) = cardinality($1::text[])" : ""}
      ORDER BY x.n, x.k
    RETURNING stream_id, version, global_position, transaction_id, recorded_at
  )
  SELECT stream_id, min(version) AS version, min(global_position) AS global_position,
      min(transaction_id::text::int8) AS transaction_id, min(recorded_at) AS recorded_at,
      CASE WHEN max(global_position) - min(global_position) = count(*) - 1 THEN NULL
        ELSE array_agg(global_position ORDER BY version) END AS positions
    FROM written GROUP BY stream_id`

const batches = [batchStatement(false, false), batchStatement(false, true), batchStatement(true, false), batchStatement(true, true)]

const byStream = (a: Append.PreparedStream, b: Append.PreparedStream) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0)

/** How `writeStreams` writes: `lock` is the inline projections' lock to hold shared (in a transaction). */
export interface BatchOptions {
  readonly atomic?: boolean
  readonly lock?: bigint | undefined
}

/**
 * Several appends, to distinct streams, in one statement: each keeps its own guard. By default (group commit) a
 * refused one inserts nothing (and gets no row) while the others are written; `atomic` (a multi-stream append)
 * inserts nothing at all when any guard refuses, so no row comes back. Streams are written in name order, as
 * multi-stream appends are prepared, so two batches cannot deadlock on each other's versions.
 */
export const writeStreams = (
  sql: SqlClient.SqlClient,
  appends: ReadonlyArray<Append.PreparedStream>,
  options: BatchOptions = {}
) => {
  const lone = appends.length === 1 ? appends[0]! : undefined
  if (lone !== undefined && lone.events.length === 1 && options.lock !== undefined) {
    // One stream: all or nothing is what its guard gives already.
    const [low, high] = acceptedRange(lone.expected)
    const event = lone.events[0]!
    return sql.unsafe<WrittenStream & { readonly stream_id: string }>(lockedOneEvent, [
      lone.stream, event.eventId, event.type, event.dataJson, event.metadataJson, low, high, options.lock.toString()
    ])
  }
  const sorted = [...appends].sort(byStream)
  const streams: Array<string> = []
  // As int8 every one: the driver infers an array's type from its elements, and a number past int4 (the unbounded
  // high of `Any`) is int8 where a small one is int4, which it refuses to mix.
  const lows: Array<bigint> = []
  const highs: Array<bigint> = []
  const ns: Array<number> = []
  const ks: Array<number> = []
  const ids: Array<string> = []
  const types: Array<string> = []
  const data: Array<string> = []
  const metadata: Array<string> = []
  for (let n = 0; n < sorted.length; n++) {
    const append = sorted[n]!
    const [low, high] = acceptedRange(append.expected)
    streams.push(append.stream)
    lows.push(BigInt(low))
    highs.push(BigInt(high))
    for (let k = 0; k < append.events.length; k++) {
      const event = append.events[k]!
      ns.push(n + 1)
      ks.push(k + 1)
      ids.push(event.eventId)
      types.push(event.type)
      data.push(event.dataJson)
      metadata.push(event.metadataJson)
    }
  }
  const params: Array<unknown> = [streams, lows, highs, ns, ks, ids, types, `[${data.join(",")}]`, `[${metadata.join(",")}]`]
  if (options.lock !== undefined) params.push(options.lock.toString())
  const text = batches[(options.lock !== undefined ? 2 : 0) + (options.atomic === true ? 1 : 0)]!
  return sql.unsafe<WrittenStream & { readonly stream_id: string }>(text, params)
}

/** The current version of each stream (0 for one with no events), read through the primary key. */
export const currentVersions = (sql: SqlClient.SqlClient, streams: ReadonlyArray<string>) =>
  sql<{ stream_id: string; version: bigint }>`SELECT s.stream_id,
      coalesce((SELECT max(e.version) FROM cairn_events e WHERE e.stream_id = s.stream_id), 0) AS version
    FROM unnest(${streams}::text[]) AS s(stream_id)`
