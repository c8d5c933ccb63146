/**
 * The EventStore port on PostgreSQL through `@effect/sql-pg`, for a Postgres server and for embedded PGlite alike.
 * An append is one call of the `cairn_append` function (EventStoreSchema.ts). The global log is read in
 * (transaction id, global position) order behind an xmin fence, so catch-up readers never skip nor repeat.
 */
import {
  Append,
  AppendSignal,
  CheckpointConflict,
  EventStore,
  EventStoreUnavailable,
  IdempotencyConflict,
  type LogPosition,
  type Projection,
  ProjectionFailed,
  type RecordedEvent,
  type StreamAppend,
  UnknownProjection,
  WrongExpectedVersion,
  ExpectedVersion,
  start
} from "@cairn/event-store"
import { Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as Schema from "./EventStoreSchema.ts"

export interface Options {
  /** Updated inside every append's transaction; their `R` is the store's own SqlClient. */
  readonly inlineProjections?: ReadonlyArray<Projection<SqlClient.SqlClient>>
}

interface EventRow {
  readonly global_position: bigint
  readonly transaction_id: bigint
  readonly stream_id: string
  readonly version: bigint
  readonly event_id: string
  readonly type: string
  readonly data: unknown
  readonly metadata: RecordedEvent["metadata"]
  readonly recorded_at: Date
}

interface AppendRow {
  readonly r_global_position: bigint
  readonly r_transaction_id: bigint
  readonly r_version: bigint
  readonly r_recorded_at: Date
  readonly r_duplicate: boolean
}

const toRecorded = (row: EventRow): RecordedEvent => ({
  eventId: row.event_id,
  type: row.type,
  stream: row.stream_id,
  version: Number(row.version),
  position: { transactionId: row.transaction_id, globalPosition: row.global_position },
  recordedAt: row.recorded_at,
  data: row.data,
  metadata: row.metadata
})

const encodeExpected = (expected: ExpectedVersion.ExpectedVersion): bigint => {
  switch (expected._tag) {
    case "Any":
      return Schema.EXPECT_ANY
    case "StreamExists":
      return Schema.EXPECT_STREAM_EXISTS
    case "NoStream":
      return 0n
    case "Exact":
      return BigInt(expected.version)
  }
}

/** The Postgres error fields sql-pg keeps on the reason's cause. */
const pgFields = (error: SqlError.SqlError): { code?: string; detail?: string; constraint?: string } =>
  (error.reason as { cause?: { code?: string; detail?: string; constraint?: string } }).cause ?? {}

const unavailable = (operation: string) => (error: SqlError.SqlError) =>
  new EventStoreUnavailable({ operation, retryable: error.isRetryable ?? false, cause: error })

const columns = "global_position, transaction_id::text::int8 AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at"

export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Schema.migrate.pipe(Effect.mapError((cause) => new EventStoreUnavailable({ operation: "migrate", retryable: false, cause })))
    const inline = options.inlineProjections ?? []
    const signal = yield* AppendSignal.make
    for (const projection of inline) {
      if (projection.setup) {
        yield* projection.setup.pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
        )
      }
    }

    const callAppend = (prepared: ReadonlyArray<Append.PreparedStream>) => {
      const events = prepared.flatMap((s) => s.events.map((e) => ({ stream: s.stream, ...e })))
      return sql<AppendRow>`SELECT * FROM cairn_append(
        ${prepared.map((s) => s.stream)}::text[],
        ${prepared.map((s) => encodeExpected(s.expected))}::int8[],
        ${prepared.map((s) => s.events.length)}::int4[],
        ${events.map((e) => e.stream)}::text[],
        ${events.map((e) => e.eventId)}::uuid[],
        ${events.map((e) => e.type)}::text[],
        ${events.map((e) => e.dataJson)}::jsonb[],
        ${events.map((e) => e.metadataJson)}::jsonb[],
        ${inline.length > 0}
      )`.pipe(Effect.map((rows) => ({ rows, events })))
    }

    const readByIds = (ids: ReadonlyArray<string>) =>
      sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events WHERE event_id = ANY(${ids}::uuid[])`.pipe(
        Effect.map((rows) => {
          const byId = new Map(rows.map((row) => [row.event_id, toRecorded(row)]))
          return ids.map((id) => byId.get(id)!)
        })
      )

    const translate = (error: SqlError.SqlError, prepared: ReadonlyArray<Append.PreparedStream>) => {
      const { code, detail = "" } = pgFields(error)
      if (code === Schema.WRONG_EXPECTED_VERSION) {
        const { stream, actual } = JSON.parse(detail) as { stream: string; actual: number }
        const expected = prepared.find((s) => s.stream === stream)!.expected
        return new WrongExpectedVersion({ stream, expected: ExpectedVersion.describe(expected), actual: Number(actual) })
      }
      if (code === Schema.IDEMPOTENCY_CONFLICT) return new IdempotencyConflict({ eventIds: detail.split(",") })
      return unavailable("append")(error)
    }

    const appendOnce = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.gen(function*() {
        const { rows, events } = yield* callAppend(prepared)
        const duplicate = rows.length > 0 && rows[0]!.r_duplicate
        const recorded: ReadonlyArray<RecordedEvent> = duplicate
          ? yield* readByIds(events.map((e) => e.eventId))
          : rows.map((row, i) => ({
            eventId: events[i]!.eventId,
            type: events[i]!.type,
            stream: events[i]!.stream,
            version: Number(row.r_version),
            position: { transactionId: row.r_transaction_id, globalPosition: row.r_global_position },
            recordedAt: row.r_recorded_at,
            data: events[i]!.data,
            metadata: events[i]!.metadata
          }))
        if (!duplicate && recorded.length > 0) {
          for (const projection of inline) {
            yield* projection.apply(recorded).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
            )
          }
        }
        return { recorded, duplicate }
      })

    const append = (appends: ReadonlyArray<StreamAppend>) =>
      Effect.gen(function*() {
        const prepared = yield* Append.prepare(appends)
        const attempt = inline.length > 0 ? sql.withTransaction(appendOnce(prepared)) : appendOnce(prepared)
        const { recorded, duplicate } = yield* attempt.pipe(
          // A concurrent retry of the same events committed between our check and our insert: the second
          // attempt finds them and acknowledges (or reports the partial overlap).
          Effect.catchIf(
            (e): e is SqlError.SqlError => e._tag === "SqlError" && pgFields(e).constraint === "cairn_events_event_id_key",
            () => inline.length > 0 ? sql.withTransaction(appendOnce(prepared)) : appendOnce(prepared)
          ),
          Effect.catchTag("SqlError", (error) => Effect.fail(translate(error, prepared)))
        )
        if (!duplicate) yield* signal.notify
        const versions = new Map<string, number>()
        for (const s of prepared) {
          const last = recorded.filter((e) => e.stream === s.stream).at(-1)
          versions.set(s.stream, last?.version ?? 0)
        }
        if (prepared.some((s) => s.events.length === 0)) {
          const empty = prepared.filter((s) => s.events.length === 0).map((s) => s.stream)
          const rows = yield* sql<{ stream_id: string; version: bigint }>`
            SELECT stream_id, version FROM cairn_streams WHERE stream_id = ANY(${empty}::text[])`.pipe(
            Effect.mapError(unavailable("append"))
          )
          for (const row of rows) versions.set(row.stream_id, Number(row.version))
        }
        return { events: recorded, versions, duplicate }
      })

    const readStream = (stream: string, { fromVersion = 1, limit }: { fromVersion?: number; limit?: number } = {}) =>
      sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events
        WHERE stream_id = ${stream} AND version >= ${fromVersion}
        ORDER BY version ${limit === undefined ? sql.literal("") : sql`LIMIT ${limit}`}`.pipe(
        Effect.map((rows) => rows.map(toRecorded)),
        Effect.mapError(unavailable("readStream"))
      )

    // The fence: rows of transactions older than the oldest one still running can no longer change their order.
    const readAll = ({ after, limit }: { after: LogPosition; limit: number }) =>
      sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events
        WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition})
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, global_position
        LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(toRecorded)),
        Effect.mapError(unavailable("readAll"))
      )

    const loadCheckpoint = (name: string) =>
      sql<{ transaction_id: bigint; global_position: bigint }>`
        SELECT transaction_id::text::int8 AS transaction_id, global_position FROM cairn_checkpoints WHERE name = ${name}`.pipe(
        Effect.map(([row]): LogPosition =>
          row === undefined ? start : { transactionId: row.transaction_id, globalPosition: row.global_position }
        ),
        Effect.mapError(unavailable("loadCheckpoint"))
      )

    const moveCheckpoint = (name: string, from: LogPosition, to: LogPosition) => {
      const tx = to.transactionId.toString()
      // The row lock this takes also makes a competing consumer wait here, then see the moved checkpoint.
      return from.transactionId === start.transactionId && from.globalPosition === start.globalPosition
        ? sql`INSERT INTO cairn_checkpoints AS c (name, transaction_id, global_position) VALUES (${name}, ${tx}::xid8, ${to.globalPosition})
            ON CONFLICT (name) DO UPDATE SET transaction_id = excluded.transaction_id, global_position = excluded.global_position, updated_at = now()
            WHERE c.transaction_id = '0'::xid8 AND c.global_position = 0
            RETURNING 1 AS moved`
        : sql`UPDATE cairn_checkpoints SET transaction_id = ${tx}::xid8, global_position = ${to.globalPosition}, updated_at = now()
            WHERE name = ${name} AND transaction_id = ${from.transactionId.toString()}::xid8 AND global_position = ${from.globalPosition}
            RETURNING 1 AS moved`
    }

    const commitCheckpoint = <A, E, R>(name: string, from: LogPosition, to: LogPosition, work: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.gen(function*() {
        const moved = yield* moveCheckpoint(name, from, to)
        if (moved.length === 0) return yield* new CheckpointConflict({ name })
        return yield* work
      })).pipe(
        Effect.catchIf(
          (e): e is SqlError.SqlError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError",
          (e) => Effect.fail(unavailable("commitCheckpoint")(e))
        )
      ) as Effect.Effect<A, E | CheckpointConflict | EventStoreUnavailable, R>

    const resetCheckpoint = <A, E, R>(name: string, work: Effect.Effect<A, E, R>) =>
      sql.withTransaction(
        work.pipe(Effect.tap(() => sql`DELETE FROM cairn_checkpoints WHERE name = ${name}`))
      ).pipe(
        Effect.catchIf(
          (e): e is SqlError.SqlError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError",
          (e) => Effect.fail(unavailable("resetCheckpoint")(e))
        )
      ) as Effect.Effect<A, E | EventStoreUnavailable, R>

    // Appends with inline projections hold the lock shared from their first statement, so once the rebuild holds
    // it exclusively every committed event is visible and no other can commit until the rebuild does: the log is
    // read without the fence, which could otherwise hide committed events behind an unrelated open transaction.
    const rebuildInline = (name: string) =>
      Effect.gen(function*() {
        const projection = inline.find((p) => p.name === name)
        if (projection === undefined) {
          return yield* new ProjectionFailed({ projection: name, cause: new UnknownProjection({ projection: name }) })
        }
        const fail = (cause: unknown) => new ProjectionFailed({ projection: name, cause })
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${Schema.INLINE_PROJECTIONS_LOCK})`
          yield* projection.reset.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(fail))
          let after = start
          let total = 0
          for (;;) {
            const rows = yield* sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events
              WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition})
              ORDER BY transaction_id, global_position LIMIT 1000`
            if (rows.length === 0) return total
            const events = rows.map(toRecorded)
            yield* projection.apply(events).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(fail))
            total += events.length
            after = events[events.length - 1]!.position
          }
        }))
      }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(unavailable("rebuildInline")(e))))

    return EventStore.of({
      append,
      readStream,
      readAll,
      appendCount: signal.count,
      awaitAppend: signal.await,
      loadCheckpoint,
      commitCheckpoint,
      resetCheckpoint,
      rebuildInline,
      ping: sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(unavailable("ping"))),
      inlineProjections: inline.map((p) => p.name)
    })
  })

/** The store on the SqlClient in context; migrations run when the layer is built. */
export const layer = (options: Options = {}) => Layer.effect(EventStore, make(options))
