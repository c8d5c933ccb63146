import type { Projection } from "@cairn/event-store"
import { PgEventStore } from "@cairn/event-store-pg"
import { layerTest } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** An inline projection whose setup creates `table` with `columns`. */
const projection = (table: string, columns: string): Projection<SqlClient.SqlClient> => ({
  name: table,
  setup: SqlClient.SqlClient.use((sql) => sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (${sql.literal(columns)})`),
  apply: () => Effect.void,
  reset: Effect.void
})

const exists = (table: string) =>
  SqlClient.SqlClient.use((sql) => sql<{ found: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS found`).pipe(
    Effect.map(([row]) => row!.found)
  )

describe("InlineSetup", () =>
  layer(layerTest(), { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("runs the inline projections' setups on a start only when their SQL changed since the last", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const start = (columns: string) =>
          PgEventStore.make({ inlineProjections: [projection("setup_probe_a", "id int"), projection("setup_probe_b", columns)] })
        yield* start("id int")
        assert.isTrue(yield* exists("setup_probe_b"))
        // A table gone behind the store's back shows whether the next start ran the setups.
        yield* sql`DROP TABLE setup_probe_b`
        yield* start("id int")
        assert.isFalse(yield* exists("setup_probe_b"), "the same SQL: skipped")
        yield* start("id int, name text")
        assert.isTrue(yield* exists("setup_probe_b"), "changed SQL: run")
        yield* sql`DROP TABLE setup_probe_b`
        yield* sql`DELETE FROM cairn_inline_setup`
        yield* start("id int, name text")
        assert.isTrue(yield* exists("setup_probe_b"), "no fingerprint kept: run")
      }))

    it.effect("lets servers that start together on one database take turns at the setups (on PostgreSQL, each on a connection of its own)", () =>
      Effect.gen(function*() {
        // Twenty new tables: two concurrent CREATE TABLE IF NOT EXISTS of one table fail in Postgres's catalog.
        const projections = Array.from({ length: 20 }, (_, i) => projection(`setup_race_${i}`, "id int, name text"))
        const starts = yield* Effect.all(
          Array.from({ length: 6 }, () => Effect.exit(PgEventStore.make({ inlineProjections: projections }))),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(starts.map((exit) => exit._tag), Array.from({ length: 6 }, () => "Success"))
        for (let i = 0; i < 20; i++) assert.isTrue(yield* exists(`setup_race_${i}`))
      }))
  }))
