import { EventStore, ExpectedVersion, type Projection } from "@cairn/event-store"
import { PgEventStore, ProjectionCheck } from "@cairn/event-store-pg"
import { layerTest } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** A profile per stream, its settings kept as JSON text, the way several of Cairn's read models keep theirs. */
const profiles: Projection<SqlClient.SqlClient> = {
  name: "test-profiles",
  setup: SqlClient.SqlClient.use((sql) =>
    sql`CREATE TABLE IF NOT EXISTS test_profiles (stream_id text PRIMARY KEY, name text NOT NULL, settings text NOT NULL)`
  ),
  apply: (events) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const e of events) {
        const data = e.data as { name: string; settings: unknown }
        yield* sql`INSERT INTO test_profiles (stream_id, name, settings) VALUES (${e.stream}, ${data.name}, ${JSON.stringify(data.settings)})
          ON CONFLICT (stream_id) DO UPDATE SET name = excluded.name, settings = excluded.settings`
      }
    }),
  reset: SqlClient.SqlClient.use((sql) => sql`DELETE FROM test_profiles`)
}

const store = PgEventStore.layer({ inlineProjections: [profiles] }).pipe(Layer.provideMerge(layerTest()))
const check = ProjectionCheck.check({ inline: [profiles], asynchronous: [] }).pipe(Effect.map(([only]) => only!))

describe("checking a read model against the log", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("finds the live table equal to a rebuild, JSON text in another key order included, and leaves nothing behind", () =>
      Effect.gen(function*() {
        const events = yield* EventStore
        // jsonb gives these keys back in another order than they were appended in: the same data.
        yield* events.append([{ stream: "profile-1", expected: ExpectedVersion.NoStream, events: [
          { type: "ProfileSet", data: { name: "Ada", settings: { theme: "dark", a: 1, nested: { zz: true, b: [1, 2] } } } }
        ] }])
        const checked = yield* check
        assert.isTrue(checked.equal, JSON.stringify(checked))
        assert.strictEqual(checked.events, 1)
        const sql = yield* SqlClient.SqlClient
        assert.deepStrictEqual(yield* sql`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'cairn_check_%'`, [])
      }))

    it.effect("counts and shows rows that differ either way", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE test_profiles SET settings = '{"theme":"light"}' WHERE stream_id = 'profile-1'`
        yield* sql`INSERT INTO test_profiles VALUES ('stray', 'Stray', '[]')`
        const checked = yield* check
        assert.isFalse(checked.equal)
        const [table] = checked.tables
        assert.strictEqual(table!.table, "test_profiles")
        assert.strictEqual(table!.onlyLive, 2)
        assert.strictEqual(table!.onlyRebuilt, 1)
        assert.sameMembers(table!.samples.onlyLive.map((row) => (row as { stream_id: string }).stream_id), ["profile-1", "stray"])
        assert.strictEqual((table!.samples.onlyRebuilt[0] as { name: string }).name, "Ada")
      }))
  }))
