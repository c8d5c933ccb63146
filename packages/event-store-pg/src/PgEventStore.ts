/**
 * The EventStore port on PostgreSQL through `@effect/sql-pg`, for a Postgres server and for embedded PGlite alike.
 * An append is one call of the `cairn_append` function (EventStoreSchema.ts). The global log is read in
 * (transaction id, global position) order behind an xmin fence, so catch-up readers never skip nor repeat.
 */
import {
  Append,
  AppendSignal,
  type AppendResult,
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
import { Data, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { columns, type EventRow, toRecorded } from "./EventRows.ts"
import * as Schema from "./EventStoreSchema.ts"
import * as PgStoreMetrics from "./PgStoreMetrics.ts"

export interface Options {
  /** Updated inside every append's transaction; their `R` is the store's own SqlClient. */
  readonly inlineProjections?: ReadonlyArray<Projection<SqlClient.SqlClient>>
}

interface WriteRow {
  readonly stream_version: bigint
  readonly global_position: bigint | null
  readonly transaction_id: bigint | null
  readonly version: bigint | null
  readonly recorded_at: Date | null
}

/** The stream's version guard refused a write; internal, it rolls a multi-stream append back. */
class Refused extends Data.TaggedError("Refused")<{ readonly stream: string }> {}

/** The Postgres error fields sql-pg keeps on the reason's cause. */
const pgFields = (error: SqlError.SqlError): { code?: string; detail?: string; constraint?: string } =>
  (error.reason as { cause?: { code?: string; detail?: string; constraint?: string } }).cause ?? {}

const unavailable = (operation: string) => (error: SqlError.SqlError) =>
  new EventStoreUnavailable({ operation, retryable: error.isRetryable ?? false, cause: error })

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

    /**
     * One statement per stream: bump the stream's version under its guard (the row lock this takes serialises
     * writers of one stream, so `Any` never fails on contention), then insert the events at the versions it
     * freed. A refused guard inserts nothing and returns no row.
     */
    const guardOf = (expected: ExpectedVersion.ExpectedVersion) => {
      switch (expected._tag) {
        case "Any":
          return sql`true`
        case "NoStream":
          return sql`s.version = 0`
        case "StreamExists":
          return sql`s.version > 0`
        case "Exact":
          return sql`s.version = ${expected.version}`
      }
    }

    const writeStream = ({ stream, expected, events }: Append.PreparedStream) => {
      const count = events.length
      // A stream that may not exist yet is created by the upsert; one that must exist is only ever updated.
      const creates = expected._tag === "Any" || expected._tag === "NoStream" || (expected._tag === "Exact" && expected.version === 0)
      const bump = creates
        ? sql`INSERT INTO cairn_streams AS s (stream_id, version) VALUES (${stream}, ${count}::int8)
            ON CONFLICT (stream_id) DO UPDATE SET version = s.version + ${count}::int8 WHERE ${guardOf(expected)}
            RETURNING s.version`
        : sql`UPDATE cairn_streams AS s SET version = s.version + ${count}::int8
            WHERE s.stream_id = ${stream} AND ${guardOf(expected)}
            RETURNING s.version`
      return sql<WriteRow>`WITH bumped AS (${bump}),
        inserted AS (
          INSERT INTO cairn_events (stream_id, version, event_id, type, data, metadata)
          SELECT ${stream}, b.version - ${count}::int8 + x.ord, x.event_id, x.type, x.data, x.metadata
            FROM bumped b, unnest(
              ${events.map((e) => e.eventId)}::uuid[],
              ${events.map((e) => e.type)}::text[],
              ${events.map((e) => e.dataJson)}::jsonb[],
              ${events.map((e) => e.metadataJson)}::jsonb[]
            ) WITH ORDINALITY AS x(event_id, type, data, metadata, ord)
            ORDER BY x.ord
          RETURNING global_position, transaction_id, version, recorded_at
        )
        SELECT b.version AS stream_version, i.global_position, i.transaction_id::text::int8 AS transaction_id, i.version, i.recorded_at
          FROM bumped b LEFT JOIN inserted i ON true
          ORDER BY i.version`.pipe(
        Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(new Refused({ stream })) : Effect.succeed(rows))
      )
    }

    const write = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.gen(function*() {
        const recorded: Array<RecordedEvent> = []
        const versions = new Map<string, number>()
        for (const append of prepared) {
          const rows = yield* writeStream(append)
          versions.set(append.stream, Number(rows[0]!.stream_version))
          for (const [i, event] of append.events.entries()) {
            const row = rows[i]!
            recorded.push({
              eventId: event.eventId,
              type: event.type,
              stream: append.stream,
              version: Number(row.version),
              position: { transactionId: row.transaction_id!, globalPosition: row.global_position! },
              recordedAt: row.recorded_at!,
              data: event.data,
              metadata: event.metadata
            })
          }
        }
        for (const projection of inline) {
          yield* projection.apply(recorded).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
          )
        }
        return { events: recorded as ReadonlyArray<RecordedEvent>, versions, duplicate: false }
      })

    // A lone statement commits by itself; several streams, or inline projections, need one transaction.
    const writeAtomically = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      prepared.length === 1 && inline.length === 0
        ? write(prepared)
        : sql.withTransaction(
          Effect.andThen(
            inline.length > 0 ? Effect.asVoid(sql`SELECT pg_advisory_xact_lock_shared(${Schema.INLINE_PROJECTIONS_LOCK})`) : Effect.void,
            write(prepared)
          )
        )

    const readByIds = (ids: ReadonlyArray<string>) =>
      sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events WHERE event_id = ANY(${ids}::uuid[])`.pipe(
        Effect.map((rows) => rows.map(toRecorded))
      )

    const currentVersions = (streams: ReadonlyArray<string>) =>
      sql<{ stream_id: string; version: bigint }>`SELECT stream_id, version FROM cairn_streams WHERE stream_id = ANY(${streams}::text[])`.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.stream_id, Number(row.version)])))
      )

    type Classified =
      | { readonly _tag: "Duplicate"; readonly events: ReadonlyArray<RecordedEvent>; readonly versions: Map<string, number> }
      | { readonly _tag: "Failed"; readonly error: IdempotencyConflict | WrongExpectedVersion }
      | { readonly _tag: "Retry" }

    /**
     * Why a write was refused, decided after it rolled back (so the common path never pays for it): events that
     * are all committed already make a retried append, acknowledged; some committed is a partial overlap; none
     * means the version guard refused. A guard that the stream now satisfies lost a race: try again.
     */
    const classify = (prepared: ReadonlyArray<Append.PreparedStream>, refused: string | undefined) =>
      Effect.gen(function*() {
        const wanted = prepared.flatMap((s) => s.events.map((e) => ({ stream: s.stream, eventId: e.eventId })))
        const committed = yield* readByIds(wanted.map((w) => w.eventId))
        if (committed.length > 0) {
          const byId = new Map(committed.map((e) => [e.eventId, e]))
          const sameStreams = wanted.every((w) => byId.get(w.eventId)?.stream === w.stream)
          if (committed.length === wanted.length && sameStreams) {
            const versions = yield* currentVersions(prepared.map((s) => s.stream))
            return { _tag: "Duplicate", events: wanted.map((w) => byId.get(w.eventId)!), versions } as Classified
          }
          return { _tag: "Failed", error: new IdempotencyConflict({ eventIds: committed.map((e) => e.eventId) }) } as Classified
        }
        if (refused === undefined) return { _tag: "Retry" } as Classified
        const actual = (yield* currentVersions([refused])).get(refused) ?? 0
        const expected = prepared.find((s) => s.stream === refused)!.expected
        if (ExpectedVersion.isSatisfiedBy(expected, actual)) return { _tag: "Retry" } as Classified
        return {
          _tag: "Failed",
          error: new WrongExpectedVersion({ stream: refused, expected: ExpectedVersion.describe(expected), actual })
        } as Classified
      }).pipe(Effect.mapError(unavailable("append")))

    const isEventIdClash = (e: SqlError.SqlError): boolean => pgFields(e).constraint === Schema.EVENT_ID_CONSTRAINT

    const onFailedWrite = (
      prepared: ReadonlyArray<Append.PreparedStream>,
      error: Refused | SqlError.SqlError | ProjectionFailed
    ): Effect.Effect<Classified, EventStoreUnavailable | ProjectionFailed> => {
      switch (error._tag) {
        case "Refused":
          return classify(prepared, error.stream)
        case "SqlError":
          return isEventIdClash(error) ? classify(prepared, undefined) : Effect.fail(unavailable("append")(error))
        default:
          return Effect.fail(error)
      }
    }

    const append = (appends: ReadonlyArray<StreamAppend>) =>
      Effect.gen(function*() {
        const prepared = yield* Append.prepare(appends)
        for (let attempt = 1;; attempt++) {
          const outcome: Classified | { readonly _tag: "Written"; readonly written: AppendResult } = yield* writeAtomically(prepared).pipe(
            Effect.map((written) => ({ _tag: "Written" as const, written })),
            Effect.catch((e) => onFailedWrite(prepared, e))
          )
          switch (outcome._tag) {
            case "Written":
              yield* signal.notify
              return outcome.written
            case "Duplicate":
              return { events: outcome.events, versions: outcome.versions, duplicate: true }
            case "Failed":
              return yield* outcome.error
            case "Retry":
              if (attempt >= 3) return yield* new EventStoreUnavailable({ operation: "append", retryable: true, cause: "append kept losing races" })
          }
        }
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
        ORDER BY cairn_events.transaction_id, cairn_events.global_position
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
              ORDER BY cairn_events.transaction_id, cairn_events.global_position LIMIT 1000`
            if (rows.length === 0) return total
            const events = rows.map(toRecorded)
            yield* projection.apply(events).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(fail))
            total += events.length
            after = events[events.length - 1]!.position
          }
        }))
      }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(unavailable("rebuildInline")(e))))

    return EventStore.of({
      append: PgStoreMetrics.timed(append),
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
