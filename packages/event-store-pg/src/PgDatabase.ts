/**
 * The SqlClient every Postgres-backed adapter shares: a real server when `DATABASE_URL` is set, otherwise an
 * embedded PGlite database in a local directory (or in memory). Both speak through `@effect/sql-pg`.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import type { Duplex } from "node:stream"
import * as DataDirLock from "./DataDirLock.ts"
import * as PgliteArtifacts from "./PgliteArtifacts.ts"
import * as PgliteSettings from "./PgliteSettings.ts"
import * as PgliteTemplate from "./PgliteTemplate.ts"
import { makePgliteStream, makeStream } from "./PgliteStream.ts"
import * as PgliteWorker from "./PgliteWorker.ts"

export type Database =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string>; readonly maxConnections?: number }
  | {
    readonly _tag: "Pglite"
    readonly dataDir: string | undefined
    /** Where the empty database new data directories are copied from is kept (PgliteTemplate.ts); none when unset. */
    readonly templates?: string | undefined
  }

const pgliteClient = (stream: () => Duplex) =>
  PgClient.layer({ stream, username: "postgres", database: "postgres", maxConnections: 1 })

/**
 * PGlite serves one session, so the pool holds exactly one connection. `undefined` keeps it in memory. A database
 * a server's entry point started opening in a worker thread (PgliteWorker.ts) is used as it is, its lock held.
 */
export const layerPglite = (
  dataDir: string | undefined,
  templates?: string
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const early = dataDir === undefined ? undefined : PgliteWorker.claim(dataDir)
    if (early !== undefined) {
      const backend = yield* Effect.acquireRelease(
        Effect.tryPromise(early.open),
        () => Effect.promise(early.close)
      ).pipe(Effect.onError(() => Effect.promise(early.close)))
      return pgliteClient(makeStream(backend))
    }
    if (dataDir !== undefined) yield* DataDirLock.acquire(dataDir, `${dataDir}.lock`)
    // Prefetched at the process's start by a server (PgliteArtifacts.ts), else read now.
    const startParams = yield* Effect.try(() => PgliteSettings.startParams(PGlite.defaultStartParams))
    const options = { ...(yield* Effect.promise(PgliteArtifacts.prefetch)), startParams }
    if (dataDir !== undefined && templates !== undefined) {
      yield* Effect.promise(() => PgliteTemplate.initialise(dataDir, templates, options))
    }
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise(() => PGlite.create(dataDir, options)),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    return pgliteClient(makePgliteStream(db))
  }))

/**
 * An in-memory PGlite started from `dump`, a tarball of an empty database (`PGlite.dumpDataDir`), instead of initdb,
 * which costs a few CPU seconds every time (about 2 s against 0.5 s from a dump on a loaded 2-core machine): for
 * tests, which make a database per file or per runtime (`@cairn/event-store-pg/testing`).
 */
export const layerPgliteFromDump = (dump: Blob): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const startParams = yield* Effect.try(() => PgliteSettings.startParams(PGlite.defaultStartParams))
    const options = { ...(yield* Effect.promise(PgliteArtifacts.prefetch)), startParams, loadDataDir: dump }
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise(() => PGlite.create(undefined, options)),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    return pgliteClient(makePgliteStream(db))
  }))

export const layerPostgres = (url: Redacted.Redacted<string>, maxConnections = 10) =>
  PgClient.layer({ url, maxConnections, applicationName: "cairn" })

export const layer = (database: Database) =>
  database._tag === "Postgres"
    ? layerPostgres(database.url, database.maxConnections)
    : layerPglite(database.dataDir, database.templates)

/**
 * `DATABASE_URL` when set; otherwise PGlite in `<DATA_DIR>/pg` (DATA_DIR defaults to ./data), a new one copied from
 * the template in `PGLITE_TEMPLATE_DIR` (`~/.cache/cairn`; `off` for none).
 */
export const fromConfig = Config.all({
  url: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  templates: Config.String("PGLITE_TEMPLATE_DIR").pipe(Config.withDefault(PgliteTemplate.defaultDirectory()))
}).pipe(
  Config.map(({ url, dataDir, templates }): Database =>
    Option.match(url, {
      onSome: (url) => ({ _tag: "Postgres", url }),
      onNone: () => ({ _tag: "Pglite", dataDir: `${dataDir}/pg`, ...(templates === "off" ? {} : { templates }) })
    })
  )
)

/** Where the database lives, for logs: never the password. */
export const describe = (database: Database): string =>
  database._tag === "Pglite"
    ? `embedded PGlite at ${database.dataDir ?? "memory"}`
    : `PostgreSQL at ${Redacted.value(database.url).replace(/\/\/[^@/]*@/, "//")}`
