/**
 * Whether an append's transaction asks Postgres to reuse the batch statement's plan (AppendStatement.ts).
 *
 * Postgres plans a prepared statement anew at each execution while its custom plans look cheaper than its generic
 * plan, and for the batch statement they always do: the generic plan guesses 10 rows for each array where a custom
 * plan sees the real count. On a server that planning costs a few µs, less than a statement asking otherwise. On
 * PGlite (Postgres compiled to WebAssembly) it is most of the statement: a two-stream append with an inline read
 * model took 2.1–2.7 ms against 1.0–1.6 ms with the generic plan, and the server's 1 MiB uploads went from 51–56 to
 * 66–71 req/s (docs/performance.md, "The append's plan on PGlite"). There, a transaction that writes a batch with its
 * inline projections starts with `SET LOCAL plan_cache_mode = force_generic_plan`: local, so it ends with the
 * transaction, and it changes which plan runs, never what a statement does.
 */
import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"

export interface BatchPlan {
  /** `work` (a transaction's statements) after the setting, where it pays; `work` as it is elsewhere. */
  readonly reused: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, R>
}

/** Asks the database once whether it runs as WebAssembly (PGlite says so in its version string). */
export const make = (sql: SqlClient.SqlClient): Effect.Effect<BatchPlan, SqlError.SqlError> =>
  Effect.map(
    sql<{ readonly wasm: boolean }>`SELECT position('emscripten' in version()) > 0 AS wasm`,
    ([row]): BatchPlan => {
      if (row?.wasm !== true) return { reused: (work) => work }
      const setting = sql`SET LOCAL plan_cache_mode = force_generic_plan`
      return { reused: (work) => Effect.andThen(setting, work) }
    }
  )
