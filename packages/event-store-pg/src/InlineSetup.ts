/**
 * Runs the inline projections' setups (their `CREATE TABLE … IF NOT EXISTS`, `ALTER TABLE … ADD COLUMN IF NOT EXISTS`:
 * about 35 statements) only when their SQL changed since the last start on this database. A fingerprint of the SQL
 * every setup would run is kept in `cairn_inline_setup` (EventStoreSchema's migration 0003) once they all ran; a start
 * that finds the same fingerprint skips them, one `SELECT` instead. The SQL is read by running the setups on a client
 * that records each statement and answers no rows, with the same Postgres compiler, so any change to a setup
 * (a new table, a new column, a changed index) changes the fingerprint and runs them all again, each idempotent as before.
 * Deleting the row makes the next start run them.
 */
import type { Projection } from "@cairn/event-store"
import { ProjectionFailed } from "@cairn/event-store"
import { PgClient } from "@effect/sql-pg"
import { Effect, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import type { SqlConnection } from "effect/sql"
import { createHash } from "node:crypto"
import * as Schema from "./EventStoreSchema.ts"

/** A client whose every statement is recorded, not run, and answers no rows. */
const recordingClient = (statements: Array<string>) => {
  const record = (sql: string, params: ReadonlyArray<unknown>) => {
    statements.push(`${sql}\n${JSON.stringify(params)}`)
  }
  const connection: SqlConnection.Connection = {
    execute: (sql, params) => Effect.sync(() => (record(sql, params), [])),
    executeRaw: (sql, params) => Effect.sync(() => (record(sql, params), [])),
    executeStream: (sql, params) => Stream.fromEffect(Effect.sync(() => record(sql, params))).pipe(Stream.drain),
    executeValues: (sql, params) => Effect.sync(() => (record(sql, params), [])),
    executeValuesUnprepared: (sql, params) => Effect.sync(() => (record(sql, params), [])),
    executeUnprepared: (sql, params) => Effect.sync(() => (record(sql, params), []))
  }
  return SqlClient.make({
    acquirer: Effect.succeed(connection),
    compiler: PgClient.makeCompiler(),
    driver: "inline-setup-fingerprint",
    spanAttributes: []
  }).pipe(Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make))
}

/** The SHA-256 of the SQL the setups run, in order, each with its projection's name. */
export const fingerprint = (projections: ReadonlyArray<Projection<SqlClient.SqlClient>>) =>
  Effect.gen(function*() {
    const statements: Array<string> = []
    const client = yield* recordingClient(statements)
    for (const projection of projections) {
      statements.push(`-- ${projection.name}`)
      if (projection.setup) {
        yield* projection.setup.pipe(
          Effect.provideService(SqlClient.SqlClient, client),
          Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
        )
      }
    }
    return createHash("sha256").update(statements.join("\n")).digest("hex")
  })

/**
 * Runs every setup unless the database's fingerprint is theirs; then records it. Servers starting together on one
 * database (a cluster's nodes, CI's test servers) take turns: the setups run in one transaction under the inline
 * projections' lock, held exclusively, and the fingerprint is read again once it is held, so the second finds the
 * first's tables made rather than racing it (two concurrent `CREATE TABLE IF NOT EXISTS` of one table fail in
 * Postgres's catalog).
 */
export const run = (sql: SqlClient.SqlClient, projections: ReadonlyArray<Projection<SqlClient.SqlClient>>) =>
  Effect.gen(function*() {
    if (projections.length === 0) return
    const wanted = yield* fingerprint(projections)
    const current = Effect.map(sql<{ fingerprint: string }>`SELECT fingerprint FROM cairn_inline_setup`, ([kept]) => kept?.fingerprint === wanted)
    if (yield* current) return
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${Schema.INLINE_PROJECTIONS_LOCK})`
      if (yield* current) return
      for (const projection of projections) {
        if (projection.setup) {
          yield* projection.setup.pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
          )
        }
      }
      yield* sql`INSERT INTO cairn_inline_setup (id, fingerprint) VALUES (true, ${wanted})
        ON CONFLICT (id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, updated_at = now()`
    }))
  })
