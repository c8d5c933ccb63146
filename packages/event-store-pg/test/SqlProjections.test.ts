import { EventStore, ExpectedVersion, type Projection, type RecordedEvent, start, Subscription } from "@cairn/event-store"
import { freshStream } from "@cairn/event-store/testing"
import { CategoryStats, PgEventStore } from "@cairn/event-store-pg"
import { layerTest } from "@cairn/event-store-pg/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** Counts events per stream in a table, inside the append's transaction; refuses events typed "Poison". */
const streamCounts: Projection<SqlClient.SqlClient> = {
  name: "test-stream-counts",
  setup: SqlClient.SqlClient.use((sql) =>
    sql`CREATE TABLE IF NOT EXISTS test_stream_counts (stream_id text PRIMARY KEY, n bigint NOT NULL)`
  ),
  apply: (events) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      if (events.some((e) => e.type === "Poison")) return yield* Effect.fail("poisoned")
      for (const e of events) {
        yield* sql`INSERT INTO test_stream_counts (stream_id, n) VALUES (${e.stream}, 1)
          ON CONFLICT (stream_id) DO UPDATE SET n = test_stream_counts.n + 1`
      }
    }),
  reset: SqlClient.SqlClient.use((sql) => sql`DELETE FROM test_stream_counts`)
}

const countOf = (stream: string) =>
  SqlClient.SqlClient.use((sql) => sql<{ n: bigint }>`SELECT n FROM test_stream_counts WHERE stream_id = ${stream}`).pipe(
    Effect.map(([row]) => Number(row?.n ?? 0))
  )

const appendOne = (stream: string, type = "Counted") =>
  EventStore.use((store) => store.append([{ stream, expected: ExpectedVersion.Any, events: [{ type, data: {} }] }]))

const readWholeLog = EventStore.use((store) =>
  Effect.gen(function*() {
    const all: Array<RecordedEvent> = []
    for (let after = start;;) {
      const batch = yield* store.readAll({ after, limit: 1000 })
      if (batch.length === 0) return all
      all.push(...batch)
      after = batch[batch.length - 1]!.position
    }
  })
)

const withInline = PgEventStore.layer({ inlineProjections: [streamCounts] }).pipe(Layer.provideMerge(layerTest()))

describe("inline projections", () =>
  layer(withInline, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect("are visible to a read made right after the append", () =>
      Effect.gen(function*() {
        const stream = freshStream()
        yield* appendOne(stream)
        yield* appendOne(stream)
        assert.strictEqual(yield* countOf(stream), 2)
      }))

    it.effect("abort the append when they fail, leaving neither events nor read-model changes", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const stream = freshStream()
        yield* appendOne(stream)
        const error = yield* Effect.flip(appendOne(stream, "Poison"))
        assert.strictEqual(error._tag, "ProjectionFailed")
        assert.strictEqual((yield* store.readStream(stream)).length, 1)
        assert.strictEqual(yield* countOf(stream), 1)
      }))

    it.effect("rebuild from the log exactly once while writers keep appending", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const streams = [freshStream("r"), freshStream("r"), freshStream("r")]
        for (const s of streams) for (let i = 0; i < 20; i++) yield* appendOne(s)
        const writers = yield* Effect.forEach(streams, (s) =>
          Effect.forkChild(Effect.forEach(Array.from({ length: 30 }), () => appendOne(s), { discard: true })))
        yield* store.rebuildInline(streamCounts.name)
        yield* Effect.forEach(writers, Fiber.join)
        for (const s of streams) {
          assert.strictEqual(yield* countOf(s), (yield* store.readStream(s)).length)
          assert.strictEqual(yield* countOf(s), 50)
        }
      }))

    it.effect("refuse to rebuild a projection that is not registered", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(EventStore.use((store) => store.rebuildInline("nope")))
        assert.strictEqual(error._tag, "ProjectionFailed")
      }))
  }))

const plain = PgEventStore.layer().pipe(Layer.provideMerge(layerTest()))

describe("asynchronous projections", () =>
  layer(plain, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    const truth = Effect.map(readWholeLog, (events) => {
      const byCategory = new Map<string, { streams: number; events: number }>()
      for (const e of events) {
        const stat = byCategory.get(CategoryStats.categoryOf(e.stream)) ?? { streams: 0, events: 0 }
        stat.events++
        if (e.version === 1) stat.streams++
        byCategory.set(CategoryStats.categoryOf(e.stream), stat)
      }
      return [...byCategory.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([category, s]) => ({ category, ...s }))
    })
    const projected = Effect.map(CategoryStats.read, (rows) => rows.map(({ category, streams, events }) => ({ category, streams, events })))
    /**
     * Catches the projection up to the whole log. The log's fence holds events back while an older transaction
     * anywhere on the server is open (another test file's, on PostgreSQL), so one catch-up can stop short of the
     * end: it is repeated until the projection shows what the log holds, or 5 s have passed.
     */
    const catchUpToEnd = Effect.gen(function*() {
      for (let i = 0; i < 500; i++) {
        yield* Subscription.catchUp(CategoryStats.projection)
        if (JSON.stringify(yield* projected) === JSON.stringify(yield* truth)) return
        yield* Effect.sleep("10 millis")
      }
    })

    it.effect("count every event once with two runners competing while writers append", () =>
      Effect.gen(function*() {
        const runners = yield* Effect.forEach([1, 2], () =>
          Effect.forkChild(Subscription.runProjection(CategoryStats.projection, { batchSize: 7, pollMillis: 10 })))
        yield* Effect.forEach(["agent", "file", "workspace"], (category) =>
          Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) => appendOne(`${category}-${i % 6}`), { discard: true }),
          { concurrency: 3, discard: true })
        yield* catchUpToEnd
        yield* Effect.forEach(runners, Fiber.interrupt)
        assert.deepStrictEqual(yield* projected, yield* truth)
      }))

    it.effect("roll back a failed batch's writes together with its checkpoint", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        yield* Subscription.catchUp(CategoryStats.projection)
        const before = yield* projected
        const checkpoint = yield* store.loadCheckpoint(CategoryStats.projection.name)
        yield* appendOne(freshStream("crash"))
        // The log's fence holds an event back while an older transaction anywhere on the server is still open (another
        // test file's, on PostgreSQL): the step below must see it, so wait until it can be read.
        for (let i = 0; i < 500 && (yield* store.readAll({ after: checkpoint, limit: 1 })).length === 0; i++) yield* Effect.sleep("10 millis")
        const crashing: Projection<SqlClient.SqlClient> = {
          ...CategoryStats.projection,
          apply: (events) => CategoryStats.projection.apply(events).pipe(Effect.andThen(Effect.fail("crash")))
        }
        const error = yield* Effect.flip(Subscription.stepProjection(crashing))
        assert.strictEqual(error._tag, "ProjectionFailed")
        assert.deepStrictEqual(yield* projected, before)
        assert.deepStrictEqual(yield* store.loadCheckpoint(CategoryStats.projection.name), checkpoint)
        yield* catchUpToEnd
        assert.deepStrictEqual(yield* projected, yield* truth)
      }))

    it.effect("rebuild from the log to the same read model", () =>
      Effect.gen(function*() {
        yield* catchUpToEnd
        const caughtUp = yield* projected
        yield* Subscription.rebuildProjection(CategoryStats.projection)
        yield* catchUpToEnd
        assert.deepStrictEqual(yield* projected, caughtUp)
        assert.deepStrictEqual(yield* projected, yield* truth)
      }))
  }))
