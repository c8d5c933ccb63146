import { ExpectedVersion } from "@cairn/event-store"
import { EventStoreSchema, PgEventStore } from "@cairn/event-store-pg"
import { layerTest } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"

// A database as the first schema left it: migration 0001 only, a stream written the old way (its version kept in
// cairn_streams beside its events).
const firstSchemaOnly = Migrator.make({})({
  loader: Effect.map(EventStoreSchema.migrations, (all) => all.filter(([id]) => id === 1)),
  table: "cairn_event_store_migrations"
})

describe("EventStoreSchema", () =>
  layer(layerTest(), { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("migrates a database of the first schema forward: its streams go on from their versions", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* firstSchemaOnly
        yield* sql`INSERT INTO cairn_streams (stream_id, version) VALUES ('old-1', 2)`
        yield* sql`INSERT INTO cairn_events (stream_id, version, event_id, type, data)
          VALUES ('old-1', 1, ${crypto.randomUUID()}, 'Opened', '{}'), ('old-1', 2, ${crypto.randomUUID()}, 'Renamed', '{}')`
        const store = yield* PgEventStore.make()
        const stale = yield* Effect.flip(store.append([{ stream: "old-1", expected: ExpectedVersion.Exact(1), events: [{ type: "Late", data: {} }] }]))
        assert.deepInclude(stale, { _tag: "WrongExpectedVersion", actual: 2 })
        const next = yield* store.append([{ stream: "old-1", expected: ExpectedVersion.Exact(2), events: [{ type: "Closed", data: {} }] }])
        assert.strictEqual(next.versions.get("old-1"), 3)
        assert.deepStrictEqual((yield* store.readStream("old-1")).map((e) => e.type), ["Opened", "Renamed", "Closed"])
        const [{ exists }] = yield* sql<{ exists: boolean }>`SELECT to_regclass('cairn_streams') IS NOT NULL AS exists`
        assert.isFalse(exists)
      }).pipe(Effect.scoped))
  }))

