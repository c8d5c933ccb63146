import { EventStore, ExpectedVersion, type Projection } from "@cairn/event-store"
import { freshStream } from "@cairn/event-store/testing"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { layerFreshPostgres, serverUrl } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

// Any inline projection: with one, every append is the batch statement inside a transaction (AppendStatement.ts).
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

describe("the batch statement's plan", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("is planned once and reused, not planned again at every append", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* EventStore
        const event = { type: "Planned", data: {} }
        for (let i = 0; i < 6; i++) {
          yield* store.append([{ stream: freshStream("plan"), expected: ExpectedVersion.NoStream, events: [event] }])
          yield* store.append([
            { stream: freshStream("plan"), expected: ExpectedVersion.NoStream, events: [event] },
            { stream: freshStream("plan"), expected: ExpectedVersion.Any, events: [event, event] }
          ])
        }
        const plans = yield* sql<{ generic: number; custom: number }>`
          SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
          WHERE statement LIKE '%accepted AS (%' AND statement NOT LIKE '%pg_prepared_statements%'`
        assert.strictEqual(plans.length, 1)
        // Postgres tries five custom plans first, then keeps the generic one when it costs no more.
        assert.strictEqual(plans[0]!.custom, 5)
        assert.strictEqual(plans[0]!.generic, 7)
        const [{ rows }] = yield* sql<{ rows: number }>`SELECT count(*)::int AS rows FROM test_plan_counted`
        assert.strictEqual(rows, 18)
      }))
  }))
