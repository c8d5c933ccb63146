import { openAppend, layerTest, serverUrl } from "@cairn/event-store-pg/testing"
import { PgEventStore } from "@cairn/event-store-pg"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { eventStoreContract, freshStream } from "@cairn/event-store/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"

const database = layerTest()
const store = PgEventStore.layer().pipe(Layer.provideMerge(database))

// PGlite serves a single session, so a second writer cannot hold a transaction open beside the first:
// the out-of-order commit race only exists on a Postgres server.
eventStoreContract(
  serverUrl() === undefined ? "PgEventStore on embedded PGlite" : "PgEventStore on PostgreSQL",
  store,
  serverUrl() === undefined ? {} : { openAppend }
)

// Concurrent single-stream appends share one statement and one commit (GroupCommit.ts); each keeps its own answer.
describe("PgEventStore group commit", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    const append = (stream: string, expected: ExpectedVersion.ExpectedVersion, eventId: string = crypto.randomUUID()) =>
      EventStore.use((store) => store.append([{ stream, expected, events: [{ eventId, type: "Grouped", data: { stream } }] }]))
    // Started at once: the first append is in flight before the others arrive, so they gather behind it.
    const concurrently = <A, E, R>(effects: ReadonlyArray<Effect.Effect<A, E, R>>) =>
      Effect.gen(function*() {
        const fibers = yield* Effect.forEach(effects, (effect) => Effect.forkChild(Effect.result(effect), { startImmediately: true }))
        return yield* Effect.forEach(fibers, Fiber.join)
      })

    it.effect("writes appends that arrive together in one transaction, refusing only the one whose expectation fails", () =>
      Effect.gen(function*() {
        const streams = Array.from({ length: 8 }, () => freshStream("group"))
        const results = yield* concurrently(streams.map((stream, i) => append(stream, i === 5 ? ExpectedVersion.Exact(3) : ExpectedVersion.NoStream)))
        const refused = results[5]!
        assert.isTrue(refused._tag === "Failure" && refused.failure._tag === "WrongExpectedVersion")
        assert.deepInclude(refused._tag === "Failure" ? refused.failure : {}, { stream: streams[5], expected: "3", actual: 0 })
        const written = results.filter((r) => r._tag === "Success").map((r) => r.success)
        assert.strictEqual(written.length, 7)
        assert.isTrue(written.every((w) => w.versions.get(w.events[0]!.stream) === 1 && w.events[0]!.stream !== streams[5]))
        const transactions = new Set(written.map((w) => w.events[0]!.position.transactionId))
        assert.isBelow(transactions.size, 7, "the appends that arrived while the first was in flight shared a commit")
        assert.deepStrictEqual(yield* EventStore.use((s) => s.readStream(streams[5]!)), [])
      }))

    it.effect("writes appends of every kind of expectation together (the guards' ranges are one array type)", () =>
      Effect.gen(function*() {
        const streams = Array.from({ length: 8 }, () => freshStream("group"))
        const results = yield* concurrently(streams.map((stream, i) => append(stream, i % 2 === 0 ? ExpectedVersion.NoStream : ExpectedVersion.Any)))
        const written = results.filter((r) => r._tag === "Success").map((r) => r.success)
        assert.strictEqual(written.length, 8)
        const transactions = new Set(written.map((w) => w.events[0]!.position.transactionId))
        assert.isBelow(transactions.size, 8, "NoStream and Any appends shared a commit")
      }))

    it.effect("answers a retried append and a lost race among others that are written", () =>
      Effect.gen(function*() {
        const [retried, contested, ...fresh] = Array.from({ length: 6 }, () => freshStream("group"))
        const eventId = crypto.randomUUID()
        const first = yield* append(retried!, ExpectedVersion.NoStream, eventId)
        yield* append(contested!, ExpectedVersion.NoStream)
        // The retry passes its guard (Any) and clashes on its event id, which fails the shared statement as a whole:
        // every append in it is then written on its own, and each gets its own answer.
        const results = yield* concurrently([
          append(retried!, ExpectedVersion.Any, eventId),
          append(contested!, ExpectedVersion.NoStream),
          ...fresh.map((stream) => append(stream, ExpectedVersion.Any))
        ])
        const [again, lost, ...others] = results
        assert.isTrue(again!._tag === "Success" && again!.success.duplicate)
        assert.deepStrictEqual(again!._tag === "Success" ? again!.success.events[0]!.position : undefined, first.events[0]!.position)
        assert.isTrue(lost!._tag === "Failure" && lost!.failure._tag === "WrongExpectedVersion")
        assert.isTrue(others.every((r) => r._tag === "Success" && !r.success.duplicate))
        for (const stream of [retried!, contested!, ...fresh]) {
          assert.strictEqual((yield* EventStore.use((s) => s.readStream(stream))).length, 1)
        }
      }))
  }))

// A one-stream append gets one row back (its first version and position); the rest is derived, and the positions are
// spelled out when a concurrent writer drew from the sequence in between, which a sequence stepping by 3 forces here.
describe("PgEventStore append answers", () =>
  layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    const appendAndRead = (events: number) =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const stream = freshStream("answer")
        yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events: [{ type: "First", data: { n: 0 } }] }])
        const result = yield* store.append([{
          stream,
          expected: ExpectedVersion.Exact(1),
          events: Array.from({ length: events }, (_, i) => ({ type: "Next", data: { n: i + 1, text: `"quoted" \\ ${i}`, nested: [i, { deep: null }] }, metadata: { actor: `a${i}` } }))
        }])
        return { result, read: yield* store.readStream(stream, { fromVersion: 2 }) }
      })

    const check = (events: number) =>
      Effect.gen(function*() {
        const { result, read } = yield* appendAndRead(events)
        assert.deepStrictEqual(result.events, read)
        assert.strictEqual(result.versions.values().next().value, events + 1)
      })

    // Started together, so all but the first gather into one group-commit statement.
    const checkBatched = (events: number) =>
      Effect.gen(function*() {
        const fibers = yield* Effect.forEach([1, 2, 3, 4, 5], () => Effect.forkChild(appendAndRead(events), { startImmediately: true }))
        for (const { result, read } of yield* Effect.forEach(fibers, Fiber.join)) assert.deepStrictEqual(result.events, read)
      })

    it.effect("hold what a reader reads back, for one event and for many, alone and batched", () =>
      Effect.gen(function*() {
        yield* check(1)
        yield* check(100)
        yield* checkBatched(1)
        yield* checkBatched(3)
      }))

    // A multi-stream append is one statement that writes every stream's events or none; its answer is what is read
    // back, and a refusal names the stream whose guard refused (read afterwards: the statement only says "some").
    it.effect("hold what a reader reads back for a multi-stream append, and name the stream a refusal is about", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const [a, b, c] = [freshStream("multi-a"), freshStream("multi-b"), freshStream("multi-c")]
        yield* store.append([{ stream: b, expected: ExpectedVersion.NoStream, events: [{ type: "First", data: {} }] }])
        const written = yield* store.append([
          { stream: c, expected: ExpectedVersion.NoStream, events: [{ type: "C", data: { n: 1 } }, { type: "C", data: { n: 2 } }] },
          { stream: b, expected: ExpectedVersion.Exact(1), events: [{ type: "B", data: { n: 3 } }] },
          { stream: a, expected: ExpectedVersion.Any, events: [{ type: "A", data: { n: 4 } }] }
        ])
        const read = [...yield* store.readStream(a), ...yield* store.readStream(b, { fromVersion: 2 }), ...yield* store.readStream(c)]
        assert.deepStrictEqual(written.events, read)
        assert.deepStrictEqual([written.versions.get(a), written.versions.get(b), written.versions.get(c)], [1, 2, 2])
        const refused = yield* Effect.flip(store.append([
          { stream: a, expected: ExpectedVersion.Exact(1), events: [{ type: "A", data: {} }] },
          { stream: c, expected: ExpectedVersion.Exact(1), events: [{ type: "C", data: {} }] }
        ]))
        assert.deepInclude(refused, { _tag: "WrongExpectedVersion", stream: c, expected: "1", actual: 2 })
        assert.strictEqual((yield* store.readStream(a)).length, 1)
      }))

    // A lone new stream's first event is inserted as version 1 without a version probe; the key refuses a second.
    it.effect("acknowledge a retried first event of a new stream, and refuse it on a stream that exists", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const stream = freshStream("answer")
        const event = { eventId: crypto.randomUUID(), type: "Created", data: { n: 1 } }
        const first = yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events: [event] }])
        const retry = yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events: [event] }])
        assert.isTrue(retry.duplicate)
        assert.deepStrictEqual(retry.events, first.events)
        const other = yield* Effect.flip(store.append([{ stream, expected: ExpectedVersion.NoStream, events: [{ type: "Created", data: {} }] }]))
        assert.deepInclude(other, { _tag: "WrongExpectedVersion", stream, expected: "no-stream", actual: 1 })
        assert.strictEqual((yield* store.readStream(stream)).length, 1)
      }))

    it.effect("hold each event's own position when the positions are not consecutive", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`ALTER TABLE cairn_events ALTER COLUMN global_position SET INCREMENT BY 3`
        yield* Effect.gen(function*() {
          yield* check(1)
          yield* check(7)
          yield* checkBatched(1)
          yield* checkBatched(3)
        }).pipe(Effect.ensuring(Effect.orDie(sql`ALTER TABLE cairn_events ALTER COLUMN global_position SET INCREMENT BY 1`)))
      }))
  }))
