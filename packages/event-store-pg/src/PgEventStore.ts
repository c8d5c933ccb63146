/**
 * The EventStore port on PostgreSQL through `@effect/sql-pg`, for a Postgres server and for embedded PGlite alike.
 * An append writes through AppendStatement.ts. The global log is read in (transaction id, global position) order
 * behind an xmin fence, so catch-up readers never skip nor repeat.
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
  InvalidAppend,
  type AppendError,
  start
} from "@cairn/event-store"
import { Context, Data, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as AppendStatement from "./AppendStatement.ts"
import * as GroupCommit from "./GroupCommit.ts"
import * as InlineSetup from "./InlineSetup.ts"
import { columns, type EventRow, toRecorded } from "./EventRows.ts"
import * as Schema from "./EventStoreSchema.ts"
import * as PgStoreMetrics from "./PgStoreMetrics.ts"

export interface Options {
  /** Updated inside every append's transaction; their `R` is the store's own SqlClient. */
  readonly inlineProjections?: ReadonlyArray<Projection<SqlClient.SqlClient>>
}

/**
 * A version guard refused a write; internal, it rolls a multi-stream append back. No stream when the append was one
 * atomic statement, which says only that some guard refused (the classification reads which).
 */
class Refused extends Data.TaggedError("Refused")<{ readonly stream: string | undefined }> {}

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
    // Their tables, unless their SQL is unchanged since the last start here (InlineSetup.ts).
    yield* InlineSetup.run(sql, inline)

    // A refused guard inserts nothing: no row back (zero-event appends only check the guard).
    const writeStream = (append: Append.PreparedStream) =>
      append.events.length === 0
        ? Effect.flatMap(AppendStatement.currentVersions(sql, [append.stream]), ([row]) =>
          ExpectedVersion.isSatisfiedBy(append.expected, Number(row!.version))
            ? Effect.succeed({ version: Number(row!.version), recorded: [] as ReadonlyArray<RecordedEvent> })
            : Effect.fail(new Refused({ stream: append.stream })))
        : Effect.flatMap(AppendStatement.writeStream(sql, append), ([row]) =>
          row === undefined
            ? Effect.fail(new Refused({ stream: append.stream }))
            : Effect.succeed({ version: Number(row.version) + append.events.length - 1, recorded: recordedOfStream(append, row) }))

    /** The events of a one-stream append as stored, from the one row its statement returns. */
    const recordedOfStream = (append: Append.PreparedStream, row: AppendStatement.WrittenStream): Array<RecordedEvent> => {
      const first = Number(row.version)
      const transactionId = BigInt(row.transaction_id)
      const recorded = new Array<RecordedEvent>(append.events.length)
      for (let i = 0; i < recorded.length; i++) {
        const event = append.events[i]!
        recorded[i] = {
          eventId: event.eventId,
          type: event.type,
          stream: append.stream,
          version: first + i,
          position: { transactionId, globalPosition: AppendStatement.positionOf(row, i) },
          recordedAt: row.recorded_at,
          data: event.data,
          metadata: event.metadata
        }
      }
      return recorded
    }

    const writtenOf = (append: Append.PreparedStream, row: AppendStatement.WrittenStream): AppendResult => ({
      events: recordedOfStream(append, row),
      versions: new Map([[append.stream, Number(row.version) + append.events.length - 1]]),
      duplicate: false
    })

    const project = (recorded: ReadonlyArray<RecordedEvent>) =>
      Effect.forEach(inline, (projection) =>
        projection.apply(recorded).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
        ), { discard: true })

    const write = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.gen(function*() {
        const recorded: Array<RecordedEvent> = []
        const versions = new Map<string, number>()
        for (const append of prepared) {
          const { version, recorded: written } = yield* writeStream(append)
          versions.set(append.stream, version)
          recorded.push(...written)
        }
        yield* project(recorded)
        return { events: recorded as ReadonlyArray<RecordedEvent>, versions, duplicate: false }
      })

    // Appends that run inline projections hold this lock shared from their first statement (see rebuildInline).
    const inTransactionWithProjections = <A, E, R>(work: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock_shared(${Schema.INLINE_PROJECTIONS_LOCK})`, work))

    const lock = inline.length > 0 ? Schema.INLINE_PROJECTIONS_LOCK : undefined

    /**
     * Every stream's events in one statement that inserts all of them or, when any guard refuses, none (no row
     * back); with inline projections it also takes their lock, so it is the transaction's first statement.
     */
    const writeTogether = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.flatMap(AppendStatement.writeStreams(sql, prepared, { atomic: true, lock }), (rows) => {
        if (rows.length !== prepared.length) return Effect.fail(new Refused({ stream: undefined }))
        const byStream = new Map<string, AppendStatement.WrittenStream>()
        for (const row of rows) byStream.set(row.stream_id, row)
        const recorded: Array<RecordedEvent> = []
        const versions = new Map<string, number>()
        for (const append of prepared) {
          const row = byStream.get(append.stream)!
          versions.set(append.stream, Number(row.version) + append.events.length - 1)
          recorded.push(...recordedOfStream(append, row))
        }
        return Effect.succeed<AppendResult>({ events: recorded, versions, duplicate: false })
      })

    // A lone statement commits by itself; several streams, or inline projections, need one transaction. When every
    // stream has events, they go in one statement (with the lock): one statement, or BEGIN, it, the projections,
    // COMMIT; a zero-event append (a guard alone) goes stream by stream.
    const writeAtomically = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      prepared.length === 1 && inline.length === 0
        ? write(prepared)
        : prepared.some((append) => append.events.length === 0)
        ? (inline.length > 0 ? inTransactionWithProjections(write(prepared)) : sql.withTransaction(write(prepared)))
        : inline.length > 0
        ? sql.withTransaction(Effect.tap(writeTogether(prepared), (written) => project(written.events)))
        : writeTogether(prepared)

    /** What a group commit answers each of its appends. */
    type Batched =
      | { readonly _tag: "Written"; readonly written: AppendResult }
      | { readonly _tag: "Refused" }
      | { readonly _tag: "Failed"; readonly error: Refused | SqlError.SqlError | ProjectionFailed; readonly alone: boolean }

    /**
     * A lone append without inline projections: its one statement commits by itself. This is every append of a
     * sequential writer, so it goes straight from the statement to its answer, with no transaction, no generator
     * and no projection step (profiled: the layers around one statement cost more CPU than the statement).
     */
    const writeLone = (append: Append.PreparedStream): Effect.Effect<ReadonlyArray<Batched>> =>
      Effect.match(AppendStatement.writeStreamAlone(sql, append), {
        onSuccess: ([row]): ReadonlyArray<Batched> =>
          row === undefined ? [{ _tag: "Refused" }] : [{ _tag: "Written", written: writtenOf(append, row) }],
        onFailure: (error): ReadonlyArray<Batched> => [{ _tag: "Failed", error, alone: true }]
      })

    /**
     * Several single-stream appends in one statement (and one transaction with the inline projections): each keeps
     * its own guard, and one that is refused leaves the others written. When the statement fails as a whole (a
     * clash with a writer outside the batch, an event id already stored, a projection failing), nothing is
     * written and every append is tried again on its own, where its own error is found.
     */
    const writeBatch = (batch: ReadonlyArray<Append.PreparedStream>): Effect.Effect<ReadonlyArray<Batched>> => {
      if (batch.length === 1 && inline.length === 0) return writeLone(batch[0]!)
      if (batch.length === 1) {
        return writeAtomically(batch).pipe(
          Effect.map((written): ReadonlyArray<Batched> => [{ _tag: "Written", written }]),
          Effect.catch((error) => Effect.succeed<ReadonlyArray<Batched>>([{ _tag: "Failed", error, alone: true }]))
        )
      }
      const outcomesOf = (rows: ReadonlyArray<AppendStatement.WrittenStream & { readonly stream_id: string }>) => {
        const byStream = new Map<string, AppendStatement.WrittenStream>()
        for (const row of rows) byStream.set(row.stream_id, row)
        return batch.map((append): Batched => {
          const row = byStream.get(append.stream)
          return row === undefined ? { _tag: "Refused" } : { _tag: "Written", written: writtenOf(append, row) }
        })
      }
      const statement = Effect.map(AppendStatement.writeStreams(sql, batch, { lock }), outcomesOf)
      return (inline.length > 0
        ? sql.withTransaction(Effect.tap(statement, (outcomes) => project(outcomes.flatMap((o) => o._tag === "Written" ? o.written.events : []))))
        : statement).pipe(
          Effect.catch((error) => Effect.succeed(batch.map((): Batched => ({ _tag: "Failed", error, alone: false }))))
        )
    }

    const groupCommit = yield* GroupCommit.make({
      keyOf: (append: Append.PreparedStream) => append.stream,
      maxBatch: 64,
      write: writeBatch
    })

    const readByIds = (ids: ReadonlyArray<string>) =>
      sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events WHERE event_id = ANY(${ids}::uuid[])`.pipe(
        Effect.map((rows) => rows.map(toRecorded))
      )

    const currentVersions = (streams: ReadonlyArray<string>) =>
      AppendStatement.currentVersions(sql, streams).pipe(
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
    const classify = (prepared: ReadonlyArray<Append.PreparedStream>, refused: string | true | undefined) =>
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
        // One atomic statement says only that some guard refused: the first stream whose guard its version fails.
        const suspects = refused === true ? prepared : prepared.filter((s) => s.stream === refused)
        const actuals = yield* currentVersions(suspects.map((s) => s.stream))
        for (const { stream, expected } of suspects) {
          const actual = actuals.get(stream) ?? 0
          if (!ExpectedVersion.isSatisfiedBy(expected, actual)) {
            return {
              _tag: "Failed",
              error: new WrongExpectedVersion({ stream, expected: ExpectedVersion.describe(expected), actual })
            } as Classified
          }
        }
        return { _tag: "Retry" } as Classified
      }).pipe(Effect.mapError(unavailable("append")))

    // An event id that exists already (a retry), or a version another writer took first (a lost race).
    const isClash = (e: SqlError.SqlError): boolean => {
      const constraint = pgFields(e).constraint
      return constraint === Schema.EVENT_ID_CONSTRAINT || constraint === Schema.VERSION_CONSTRAINT
    }

    const onFailedWrite = (
      prepared: ReadonlyArray<Append.PreparedStream>,
      error: Refused | SqlError.SqlError | ProjectionFailed
    ): Effect.Effect<Classified, EventStoreUnavailable | ProjectionFailed> => {
      switch (error._tag) {
        case "Refused":
          return classify(prepared, error.stream ?? true)
        case "SqlError":
          // A version taken is refused like a guard (a lone new stream's first event has none but the key).
          return isClash(error)
            ? classify(prepared, prepared.length === 1 && pgFields(error).constraint === Schema.VERSION_CONSTRAINT ? prepared[0]!.stream : undefined)
            : Effect.fail(unavailable("append")(error))
        default:
          return Effect.fail(error)
      }
    }

    type Outcome = Classified | { readonly _tag: "Written"; readonly written: AppendResult }

    const settle = (outcome: Outcome) => {
      switch (outcome._tag) {
        case "Written":
          return Effect.as(signal.notify, outcome.written)
        case "Duplicate":
          return Effect.succeed<AppendResult>({ events: outcome.events, versions: outcome.versions, duplicate: true })
        case "Failed":
          return Effect.fail(outcome.error)
        case "Retry":
          return Effect.succeed(undefined)
      }
    }

    // Each lost race means another writer of the stream committed, so the store as a whole moves on; a short random
    // pause spreads writers that keep colliding, and the bound keeps one caller from losing for ever.
    const maxAttempts = 20
    const pauseAfter = (attempt: number) => Effect.sleep(Math.random() * Math.min(2 ** attempt, 100))

    const appendAlone = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.gen(function*() {
        for (let attempt = 1;; attempt++) {
          const outcome: Outcome = yield* writeAtomically(prepared).pipe(
            Effect.map((written) => ({ _tag: "Written" as const, written })),
            Effect.catch((e) => onFailedWrite(prepared, e))
          )
          const settled = yield* settle(outcome)
          if (settled !== undefined) return settled
          if (attempt >= maxAttempts) return yield* new EventStoreUnavailable({ operation: "append", retryable: true, cause: "append kept losing races" })
          yield* pauseAfter(attempt)
        }
      })

    // Written is the common answer and settles without a generator; the rest find out why (classify) first.
    const appendInGroup = (prepared: ReadonlyArray<Append.PreparedStream>) =>
      Effect.flatMap(groupCommit.submit(prepared[0]!), (batched) => {
        if (batched._tag !== "Written") return afterBatchRefusal(prepared, batched)
        signal.notifyUnsafe()
        return Effect.succeed(batched.written)
      })

    const afterBatchRefusal = (prepared: ReadonlyArray<Append.PreparedStream>, batched: Exclude<Batched, { _tag: "Written" }>) =>
      Effect.gen(function*() {
        const outcome: Outcome | undefined = batched._tag === "Refused"
          ? yield* classify(prepared, prepared[0]!.stream)
          : batched.alone
          ? yield* onFailedWrite(prepared, batched.error)
          : undefined
        const settled = outcome === undefined ? undefined : yield* settle(outcome)
        return settled ?? (yield* appendAlone(prepared))
      })

    // One step from the call to the write: the appends are prepared, and a single-stream append joins the group
    // commit unless the caller holds a transaction the append must be part of (profiled: each Effect layer around
    // one statement was measurable CPU per append).
    const append = (appends: ReadonlyArray<StreamAppend>) =>
      Effect.withFiber<AppendResult, AppendError | ProjectionFailed>((fiber) => {
        const prepared = Append.prepareUnsafe(appends)
        if (prepared instanceof InvalidAppend) return Effect.fail(prepared)
        return prepared.length === 1 && prepared[0]!.events.length > 0 &&
            Context.getOrUndefined(fiber.context, sql.transactionService) === undefined
          ? appendInGroup(prepared)
          : appendAlone(prepared)
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
