import { EventStore, ExpectedVersion, type Projection } from "@cairn/event-store"
import { freshStream } from "@cairn/event-store/testing"
import { PgEventStore } from "@cairn/event-store-pg"
import { layerTest, serverUrl } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

// The plan setting each inline apply ran under, in order.
const seen: Array<string> = []
const planProbe: Projection<SqlClient.SqlClient> = {
  name: "test-plan-probe",
  apply: () =>
    SqlClient.SqlClient.use((sql) => sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode`).pipe(
      Effect.map(([row]) => {
        seen.push(row!.mode)
      })
    ),
  reset: Effect.void
}

const store = PgEventStore.layer({ inlineProjections: [planProbe] }).pipe(Layer.provideMerge(layerTest()))
const onPglite = serverUrl() === undefined

describe("the batch statement's plan (BatchPlan.ts)", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect(`is the generic one inside an append's transaction ${onPglite ? "on PGlite" : "nowhere on a server"}, and only there`, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* EventStore
        seen.length = 0
        const one = freshStream("plan")
        yield* store.append([{ stream: one, expected: ExpectedVersion.NoStream, events: [{ type: "Probed", data: {} }] }])
        yield* store.append([
          { stream: freshStream("plan"), expected: ExpectedVersion.NoStream, events: [{ type: "Probed", data: {} }] },
          { stream: one, expected: ExpectedVersion.Exact(1), events: [{ type: "Probed", data: {} }] }
        ])
        const expected = onPglite ? "force_generic_plan" : "auto"
        assert.deepStrictEqual(seen, [expected, expected])
        // Local to the append's transaction: the session is as it was.
        const [after] = yield* sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode`
        assert.strictEqual(after!.mode, "auto")
        assert.strictEqual((yield* store.readStream(one)).length, 2)
      }))
  }))
