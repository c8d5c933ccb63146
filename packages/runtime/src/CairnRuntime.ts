/**
 * The layers every Cairn process is built from, chosen by configuration: the database (Postgres when
 * `DATABASE_URL` is set, embedded PGlite in `DATA_DIR` otherwise), the event store with its inline read models
 * and, for servers, the asynchronous read-model runners. Entry points add only how they serve.
 */
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { Effect, Layer } from "effect"
import * as ReadModels from "./ReadModels.ts"

/** The database and the event store over it, migrated. */
export const layerStore = (database: PgDatabase.Database) =>
  PgEventStore.layer({ inlineProjections: ReadModels.inline }).pipe(
    Layer.provideMerge(PgDatabase.layer(database))
  )

/** What a server runs: the store, plus the runners that keep asynchronous read models current. */
export const layerServer = (database: PgDatabase.Database) =>
  ReadModels.layerRunners.pipe(Layer.provideMerge(layerStore(database)))

/** Reads the database choice from the environment and logs it (never a password). */
export const databaseFromConfig = Effect.gen(function*() {
  const database = yield* PgDatabase.fromConfig
  yield* Effect.logInfo(`Event store: ${PgDatabase.describe(database)}`)
  return database
})
