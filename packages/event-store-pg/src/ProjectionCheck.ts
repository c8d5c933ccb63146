/**
 * Checks read models against the log (`cli replay`): every projection is rebuilt from the whole log into a fresh
 * schema, and each of its tables is compared row by row with the live one. It all happens in one repeatable-read
 * transaction that is rolled back at the end, so the log and the live tables are seen at one instant, appends go on
 * meanwhile, and nothing is left behind (not even after a crash). The fresh schema comes first on the transaction's
 * `search_path`, so the projections' own unqualified SQL writes there while `cairn_events` is read from the live one.
 *
 * An asynchronous projection lags the log by design: it is rebuilt only up to its checkpoint, where the live table
 * stands, and how far behind it is is reported beside the comparison.
 */
import {
  EventStoreUnavailable,
  type LogPosition,
  type Projection,
  ProjectionFailed,
  compare,
  start
} from "@cairn/event-store"
import { Effect, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { columns, type EventRow, toRecorded } from "./EventRows.ts"

export interface TableComparison {
  readonly table: string
  /** The schema the live table was found in, through the search path; null when there is none (then every rebuilt row is missing). */
  readonly liveSchema: string | null
  /** Columns the rebuilt table has and the live one lacks, and the other way round. */
  readonly missingColumns: ReadonlyArray<string>
  readonly extraColumns: ReadonlyArray<string>
  /** Rows (over the columns both have) only the rebuild has: the live table lost or never got them. */
  readonly onlyRebuilt: number
  /** Rows only the live table has: written by something other than the log, or left behind. */
  readonly onlyLive: number
  /** Up to `sampleSize` of each, as JSON. */
  readonly samples: { readonly onlyRebuilt: ReadonlyArray<unknown>; readonly onlyLive: ReadonlyArray<unknown> }
}

export interface ProjectionComparison {
  readonly projection: string
  /** Events of the log the rebuild went through. */
  readonly events: number
  /** Events of the log after its checkpoint (asynchronous projections only; 0 for inline ones). */
  readonly behind: number
  readonly tables: ReadonlyArray<TableComparison>
  readonly equal: boolean
}

export interface Options {
  readonly inline: ReadonlyArray<Projection<SqlClient.SqlClient>>
  readonly asynchronous: ReadonlyArray<Projection<SqlClient.SqlClient>>
  readonly sampleSize?: number
  readonly batchSize?: number
}

const quote = (identifier: string) => `"${identifier.replaceAll("\"", "\"\"")}"`

/** Carries the result out of the transaction, which is always rolled back. */
class RolledBack extends Schema.TaggedError<RolledBack>()("RolledBack", { result: Schema.Any }) {}

export const check = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sampleSize = options.sampleSize ?? 5
    const batchSize = options.batchSize ?? 1000
    const fresh = `cairn_check_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`
    const projections = [
      ...options.inline.map((projection) => ({ projection, asynchronous: false })),
      ...options.asynchronous.map((projection) => ({ projection, asynchronous: true }))
    ]

    const run = Effect.gen(function*() {
      // Where each asynchronous projection stands, read in the same snapshot as its tables.
      const until = new Map<string, LogPosition | undefined>()
      for (const { projection, asynchronous } of projections) {
        if (!asynchronous) continue
        const [row] = yield* sql<{ transaction_id: bigint; global_position: bigint }>`
          SELECT transaction_id::text::int8 AS transaction_id, global_position FROM cairn_checkpoints WHERE name = ${projection.name}`
        until.set(projection.name, row === undefined ? start : { transactionId: BigInt(row.transaction_id), globalPosition: BigInt(row.global_position) })
      }

      const [{ path }] = (yield* sql<{ path: string }>`SELECT current_setting('search_path') AS path`) as unknown as [{ path: string }]
      yield* sql.unsafe(`CREATE SCHEMA ${quote(fresh)}`)
      // JSON kept in a text column is compared as JSON: its key order depends on whether the handler got the event
      // as it was appended or as jsonb gave it back, which is the same data (a template's required secrets, say).
      yield* sql.unsafe(`CREATE FUNCTION ${quote(fresh)}.json_text(value text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN RETURN value::jsonb::text; EXCEPTION WHEN others THEN RETURN value; END $$`)
      yield* sql`SELECT set_config('search_path', ${`${quote(fresh)}, ${path}`}, true)`

      // Each projection's tables: what its setup created in the fresh schema.
      const tablesOf = new Map<string, ReadonlyArray<string>>()
      const freshTables = () =>
        sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = ${fresh}`.pipe(
          Effect.map((rows) => new Set(rows.map((r) => r.table_name)))
        )
      for (const { projection } of projections) {
        const before = yield* freshTables()
        if (projection.setup) yield* projection.setup.pipe(Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause })))
        tablesOf.set(projection.name, [...(yield* freshTables())].filter((t) => !before.has(t)).sort())
      }

      // One pass over the log, each batch applied to every projection in the order the appends apply them.
      const applied = new Map<string, number>(projections.map(({ projection }) => [projection.name, 0]))
      const behind = new Map<string, number>(projections.map(({ projection }) => [projection.name, 0]))
      let after = start
      for (;;) {
        const rows = yield* sql<EventRow>`SELECT ${sql.literal(columns)} FROM cairn_events
          WHERE (transaction_id, global_position) > (${after.transactionId.toString()}::xid8, ${after.globalPosition})
          ORDER BY cairn_events.transaction_id, cairn_events.global_position LIMIT ${batchSize}`
        if (rows.length === 0) break
        const events = rows.map(toRecorded)
        for (const { projection, asynchronous } of projections) {
          const limit = until.get(projection.name)
          const mine = asynchronous && limit !== undefined ? events.filter((e) => compare(e.position, limit) <= 0) : events
          behind.set(projection.name, behind.get(projection.name)! + events.length - mine.length)
          if (mine.length === 0) continue
          yield* projection.apply(mine).pipe(Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause })))
          applied.set(projection.name, applied.get(projection.name)! + mine.length)
        }
        after = events[events.length - 1]!.position
      }

      const results: Array<ProjectionComparison> = []
      for (const { projection } of projections) {
        const tables: Array<TableComparison> = []
        for (const table of tablesOf.get(projection.name) ?? []) tables.push(yield* compareTable(sql, fresh, table, sampleSize))
        results.push({
          projection: projection.name,
          events: applied.get(projection.name)!,
          behind: behind.get(projection.name)!,
          tables,
          equal: tables.every((t) => t.onlyLive === 0 && t.onlyRebuilt === 0 && t.missingColumns.length === 0)
        })
      }
      return yield* new RolledBack({ result: results })
    })

    return yield* sql.withTransaction(run).pipe(
      Effect.provideService(SqlClient.BeginTransaction, "BEGIN ISOLATION LEVEL REPEATABLE READ"),
      Effect.catchTag("RolledBack", (rolledBack) => Effect.succeed(rolledBack.result as ReadonlyArray<ProjectionComparison>)),
      Effect.catchTag("SqlError", (error: SqlError.SqlError) =>
        Effect.fail(new EventStoreUnavailable({ operation: "checkProjections", retryable: error.isRetryable ?? false, cause: error })))
    )
  })

/** The rows of `fresh.table` and of the live table of that name (first on the original search path) that differ. */
const compareTable = (sql: SqlClient.SqlClient, fresh: string, table: string, sampleSize: number) =>
  Effect.gen(function*() {
    const columnsOf = (schema: string) =>
      sql<{ column_name: string; data_type: string }>`SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = ${schema} AND table_name = ${table} ORDER BY ordinal_position`
    const rebuiltTypes = new Map((yield* columnsOf(fresh)).map((c) => [c.column_name, c.data_type]))
    const [live] = yield* sql<{ table_schema: string }>`SELECT table_schema FROM information_schema.tables
      WHERE table_name = ${table} AND table_schema <> ${fresh} AND table_schema = ANY (current_schemas(false))
      ORDER BY array_position(current_schemas(false), table_schema::name) LIMIT 1`
    const rebuiltColumns = [...rebuiltTypes.keys()]
    const rebuilt = `${quote(fresh)}.${quote(table)}`
    if (live === undefined) {
      const [{ count }] = (yield* sql.unsafe<{ count: bigint }>(`SELECT count(*) AS count FROM ${rebuilt}`)) as unknown as [{ count: bigint }]
      const samples = yield* sql.unsafe<{ row: unknown }>(`SELECT to_jsonb(r) AS row FROM ${rebuilt} r LIMIT ${sampleSize}`)
      return {
        table, liveSchema: null, missingColumns: [], extraColumns: [], onlyRebuilt: Number(count), onlyLive: 0,
        samples: { onlyRebuilt: samples.map((s) => s.row), onlyLive: [] }
      } satisfies TableComparison
    }
    const liveColumns = (yield* columnsOf(live.table_schema)).map((c) => c.column_name)
    const common = rebuiltColumns.filter((c) => liveColumns.includes(c))
    const list = common.map((c) =>
      rebuiltTypes.get(c) === "text" || rebuiltTypes.get(c) === "character varying"
        ? `CASE WHEN left(${quote(c)}, 1) IN ('{', '[') THEN ${quote(fresh)}.json_text(${quote(c)}) ELSE ${quote(c)} END AS ${quote(c)}`
        : quote(c)
    ).join(", ")
    const liveTable = `${quote(live.table_schema)}.${quote(table)}`
    const difference = (from: string, minus: string) =>
      Effect.all([
        sql.unsafe<{ count: bigint }>(`SELECT count(*) AS count FROM (SELECT ${list} FROM ${from} EXCEPT ALL SELECT ${list} FROM ${minus}) d`),
        sql.unsafe<{ row: unknown }>(`SELECT to_jsonb(d) AS row FROM (SELECT ${list} FROM ${from} EXCEPT ALL SELECT ${list} FROM ${minus}) d LIMIT ${sampleSize}`)
      ]).pipe(Effect.map(([[counted], samples]) => ({ count: Number(counted?.count ?? 0), samples: samples.map((s) => s.row) })))
    const onlyRebuilt = yield* difference(rebuilt, liveTable)
    const onlyLive = yield* difference(liveTable, rebuilt)
    return {
      table,
      liveSchema: live.table_schema,
      missingColumns: rebuiltColumns.filter((c) => !liveColumns.includes(c)),
      extraColumns: liveColumns.filter((c) => !rebuiltColumns.includes(c)),
      onlyRebuilt: onlyRebuilt.count,
      onlyLive: onlyLive.count,
      samples: { onlyRebuilt: onlyRebuilt.samples, onlyLive: onlyLive.samples }
    } satisfies TableComparison
  })
