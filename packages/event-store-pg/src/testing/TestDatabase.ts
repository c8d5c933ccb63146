/**
 * Databases for tests: a fresh, empty Postgres database per suite on the server `DATABASE_URL` points at (dropped
 * afterwards), or an in-memory PGlite when it is unset.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as PgDatabase from "../PgDatabase.ts"
import { emptyDatabase } from "./EmptyDatabase.ts"

export const serverUrl = (): string | undefined => process.env["DATABASE_URL"] || undefined

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** A new database on the server, created for this layer and dropped when it is released. */
export const layerFreshPostgres = (url: string, maxConnections = 10) =>
  Layer.unwrap(Effect.gen(function*() {
    const name = `cairn_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = (statement: string) =>
      Effect.scoped(Effect.gen(function*() {
        const client = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 1 })
        yield* client.unsafe(statement)
      })).pipe(Effect.provide(Reactivity.layer))
    yield* Effect.acquireRelease(
      admin(`CREATE DATABASE ${name}`),
      () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
    )
    return PgDatabase.layerPostgres(Redacted.make(withDatabase(url, name)), maxConnections)
  }))

/**
 * The database a test suite runs on: Postgres when DATABASE_URL is set, in-memory PGlite otherwise, started from an
 * empty database's dump (EmptyDatabase.ts) rather than by initdb.
 */
export const layerTest = () => {
  const url = serverUrl()
  return url === undefined
    ? Layer.unwrap(Effect.map(Effect.promise(emptyDatabase), PgDatabase.layerPgliteFromDump))
    : layerFreshPostgres(url)
}
