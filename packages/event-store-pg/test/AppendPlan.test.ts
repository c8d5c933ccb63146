import { EventStore, ExpectedVersion, type Projection } from "@cairn/event-store"
import { freshStream } from "@cairn/event-store/testing"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { layerFreshPostgres, serverUrl } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

// Any inline projection: with one, every append is one statement with the lock inside a transaction
// (AppendStatement.ts): the batch statement, or for one event to one stream a statement of its own.
const counted: Projection<SqlClient.SqlClient> = {
  name: "test-plan-counted",
  setup: SqlClient.SqlClient.use((sql) => sql`CREATE TABLE IF NOT EXISTS test_plan_counted (stream_id text PRIMARY KEY)`),
  apply: (events) =>
    SqlClient.SqlClient.use((sql) =>
      Effect.forEach(events, (e) => sql`INSERT INTO test_plan_counted VALUES (${e.stream}) ON CONFLICT DO NOTHING`, { discard: true })
    ),
  reset: SqlClient.SqlClient.use((sql) => sql`DELETE FROM test_plan_counted`)
}

// One connection, so the session that prepared the store's statements is the one asked about them.
const url = serverUrl()
const database = url === undefined ? PgDatabase.layerPglite(undefined) : layerFreshPostgres(url, 1)
const store = PgEventStore.layer({ inlineProjections: [counted] }).pipe(Layer.provideMerge(database))

describe("the append statements' plans", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("are planned once and reused, not planned again at every append", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* EventStore
        const event = { type: "Planned", data: {} }
        for (let i = 0; i < 12; i++) {
          yield* store.append([{ stream: freshStream("plan"), expected: ExpectedVersion.NoStream, events: [event] }])
          yield* store.append([
            { stream: freshStream("plan"), expected: ExpectedVersion.NoStream, events: [event] },
            { stream: freshStream("plan"), expected: ExpectedVersion.Any, events: [event, event] }
          ])
        }
        const plans = yield* sql<{ statement: string; generic: number; custom: number }>`
          SELECT CASE WHEN statement LIKE '%accepted AS (%' THEN 'batch' ELSE 'one event' END AS statement,
              generic_plans::int AS generic, custom_plans::int AS custom
            FROM pg_prepared_statements
           WHERE statement LIKE '%held AS MATERIALIZED%' AND statement NOT LIKE '%pg_prepared_statements%'
           ORDER BY 1`
        // Postgres tries five custom plans first, then keeps the generic one when it costs no more.
        assert.deepStrictEqual(plans, [
          { statement: "batch", custom: 5, generic: 7 },
          { statement: "one event", custom: 5, generic: 7 }
        ])
        const [{ rows }] = yield* sql<{ rows: number }>`SELECT count(*)::int AS rows FROM test_plan_counted`
        assert.strictEqual(rows, 36)
      }))
  }))
