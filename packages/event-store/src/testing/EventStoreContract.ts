/**
 * The behaviour every EventStore adapter must show, written once against the port. Each adapter's test file calls
 * `eventStoreContract` with a layer; an adapter is done when the whole suite passes on it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, type Layer, Ref, type Scope, Stream } from "effect"
import * as fc from "fast-check"
import { EventStore, type StreamAppend } from "../EventStore.ts"
import * as ExpectedVersion from "../ExpectedVersion.ts"
import { compare, type RecordedEvent, start } from "../RecordedEvent.ts"
import * as Subscription from "../Subscription.ts"

/** An append whose transaction stays open until `commit`: how a slow writer looks to readers. */
export interface OpenAppend {
  /** Takes a transaction id (and nothing else) without appending yet. */
  readonly begin: Effect.Effect<void>
  readonly append: (appends: ReadonlyArray<StreamAppend>) => Effect.Effect<void>
  readonly commit: Effect.Effect<void>
}

export interface ContractOptions<R> {
  /** Opens a second writer on its own connection, for the out-of-order commit race; only multi-connection stores. */
  readonly openAppend?: Effect.Effect<OpenAppend, never, R | Scope.Scope>
}

let counter = 0
/** A stream name no other test uses, so one store serves the whole suite. */
export const freshStream = (prefix = "test") => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

const event = (type: string, data: unknown = {}) => ({ type, data })

const append = (stream: string, expected: ExpectedVersion.ExpectedVersion, count = 1, type = "Happened") =>
  EventStore.use((store) =>
    store.append([{ stream, expected, events: Array.from({ length: count }, (_, i) => event(type, { i })) }])
  )

/** Collects a live subscription from the start of the log until `until` holds, failing after `timeout`. */
const collectLive = (until: (events: ReadonlyArray<RecordedEvent>) => boolean) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<Array<RecordedEvent>>([])
    const fiber = yield* Subscription.subscribe(start, { pollMillis: 20 }).pipe(
      Stream.runForEach((e) => Ref.update(seen, (all) => (all.push(e), all))),
      Effect.forkChild
    )
    return {
      seen: Ref.get(seen),
      waitFor: Effect.gen(function*() {
        for (;;) {
          const events = yield* Ref.get(seen)
          if (until(events)) return events
          yield* Effect.sleep("10 millis")
        }
      }).pipe(Effect.timeout("60 seconds"), Effect.ensuring(Fiber.interrupt(fiber)))
    }
  })

/** Reads the whole readable log from the start, as a fresh replay would. */
const replay = EventStore.use((store) =>
  Effect.gen(function*() {
    const all: Array<RecordedEvent> = []
    let after = start
    for (;;) {
      const batch = yield* store.readAll({ after, limit: 1000 })
      if (batch.length === 0) return all
      all.push(...batch)
      after = batch[batch.length - 1]!.position
    }
  })
)

const assertExactlyOnceInOrder = (events: ReadonlyArray<RecordedEvent>, ids: ReadonlySet<string>) => {
  const mine = events.filter((e) => ids.has(e.eventId))
  assert.strictEqual(new Set(mine.map((e) => e.eventId)).size, mine.length, "an event was delivered twice")
  assert.strictEqual(mine.length, ids.size, "an event was never delivered")
  for (let i = 1; i < events.length; i++) {
    assert.isTrue(compare(events[i - 1]!.position, events[i]!.position) < 0, "positions must strictly increase")
  }
  const lastVersion = new Map<string, number>()
  for (const e of mine) {
    assert.strictEqual(e.version, (lastVersion.get(e.stream) ?? 0) + 1, `stream ${e.stream} delivered out of order`)
    lastVersion.set(e.stream, e.version)
  }
}

export const eventStoreContract = <R = never>(
  adapter: string,
  store: Layer.Layer<EventStore | R, unknown>,
  options: ContractOptions<EventStore | R> = {}
) =>
  describe(`${adapter} honours the EventStore contract`, () =>
    layer(store, { timeout: "120 seconds", excludeTestServices: true })((it) => {
      it.effect("numbers a new stream's events from 1 and reads them back with their metadata", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          const result = yield* store.append([{
            stream,
            expected: ExpectedVersion.NoStream,
            events: [
              { type: "Opened", data: { n: 1 }, metadata: { actor: "user-1", correlationId: "c-1", causationId: "k-1" } },
              { type: "Renamed", data: { name: "two" } }
            ]
          }])
          assert.isFalse(result.duplicate)
          assert.strictEqual(result.versions.get(stream), 2)
          const read = yield* store.readStream(stream)
          assert.deepStrictEqual(read.map((e) => [e.version, e.type, e.data]), [[1, "Opened", { n: 1 }], [2, "Renamed", { name: "two" }]])
          assert.deepStrictEqual(read[0]!.metadata, { actor: "user-1", correlationId: "c-1", causationId: "k-1" })
          assert.deepStrictEqual(read.map((e) => e.eventId), result.events.map((e) => e.eventId))
          assert.instanceOf(read[0]!.recordedAt, Date)
          assert.isTrue(compare(read[0]!.position, read[1]!.position) < 0)
        }))

      it.effect("reads a stream from a version, with a limit", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          yield* append(stream, ExpectedVersion.NoStream, 10)
          const read = yield* store.readStream(stream, { fromVersion: 4, limit: 3 })
          assert.deepStrictEqual(read.map((e) => e.version), [4, 5, 6])
          assert.deepStrictEqual(yield* store.readStream(freshStream()), [])
        }))

      it.effect("refuses each expected version the stream does not meet, reporting the actual version", () =>
        Effect.gen(function*() {
          const stream = freshStream()
          const missing = yield* Effect.flip(append(stream, ExpectedVersion.StreamExists))
          assert.deepInclude(missing, { _tag: "WrongExpectedVersion", stream, expected: "stream-exists", actual: 0 })
          yield* append(stream, ExpectedVersion.NoStream, 3)
          const exists = yield* Effect.flip(append(stream, ExpectedVersion.NoStream))
          assert.deepInclude(exists, { _tag: "WrongExpectedVersion", expected: "no-stream", actual: 3 })
          const stale = yield* Effect.flip(append(stream, ExpectedVersion.Exact(2)))
          assert.deepInclude(stale, { _tag: "WrongExpectedVersion", expected: "2", actual: 3 })
          const ok = yield* append(stream, ExpectedVersion.Exact(3))
          assert.strictEqual(ok.versions.get(stream), 4)
          assert.strictEqual((yield* append(stream, ExpectedVersion.StreamExists)).versions.get(stream), 5)
          assert.strictEqual((yield* append(stream, ExpectedVersion.Any, 2)).versions.get(stream), 7)
        }))

      it.effect("writes to every stream of a multi-stream append or to none", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const [a, b] = [freshStream("a"), freshStream("b")]
          yield* append(b, ExpectedVersion.NoStream)
          const error = yield* Effect.flip(store.append([
            { stream: a, expected: ExpectedVersion.NoStream, events: [event("A")] },
            { stream: b, expected: ExpectedVersion.NoStream, events: [event("B")] }
          ]))
          assert.strictEqual(error._tag, "WrongExpectedVersion")
          assert.deepStrictEqual(yield* store.readStream(a), [])
          const both = yield* store.append([
            { stream: a, expected: ExpectedVersion.NoStream, events: [event("A")] },
            { stream: b, expected: ExpectedVersion.Exact(1), events: [event("B")] }
          ])
          assert.deepStrictEqual([both.versions.get(a), both.versions.get(b)], [1, 2])
          assert.strictEqual(new Set(both.events.map((e) => e.position.transactionId)).size, 1, "one transaction")
        }))

      it.effect("acknowledges a retried append without writing it twice, and refuses a partial overlap", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          const events = [0, 1, 2].map((i) => ({ eventId: crypto.randomUUID(), type: "Paid", data: { i } }))
          const first = yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events }])
          const retry = yield* store.append([{ stream, expected: ExpectedVersion.NoStream, events }])
          assert.isTrue(retry.duplicate)
          assert.deepStrictEqual(retry.events.map((e) => [e.eventId, e.version]), first.events.map((e) => [e.eventId, e.version]))
          assert.strictEqual((yield* store.readStream(stream)).length, 3)
          const partial = yield* Effect.flip(store.append([{
            stream,
            expected: ExpectedVersion.Any,
            events: [events[0]!, { eventId: crypto.randomUUID(), type: "Paid", data: {} }]
          }]))
          assert.deepInclude(partial, { _tag: "IdempotencyConflict", eventIds: [events[0]!.eventId] })
          const elsewhere = yield* Effect.flip(store.append([{ stream: freshStream(), expected: ExpectedVersion.Any, events }]))
          assert.strictEqual(elsewhere._tag, "IdempotencyConflict")
          assert.strictEqual((yield* store.readStream(stream)).length, 3)
        }))

      it.effect("rejects malformed appends before writing", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          const badId = yield* Effect.flip(store.append([{ stream, expected: ExpectedVersion.Any, events: [{ eventId: "not-a-uuid", type: "X", data: {} }] }]))
          assert.strictEqual(badId._tag, "InvalidAppend")
          const twice = yield* Effect.flip(store.append([
            { stream, expected: ExpectedVersion.Any, events: [event("X")] },
            { stream, expected: ExpectedVersion.Any, events: [event("Y")] }
          ]))
          assert.strictEqual(twice._tag, "InvalidAppend")
          const badVersion = yield* Effect.flip(append(stream, ExpectedVersion.Exact(-1)))
          assert.strictEqual(badVersion._tag, "InvalidAppend")
          assert.deepStrictEqual(yield* store.readStream(stream), [])
        }))

      it.effect("never fails an Any append because of contention", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          yield* Effect.forEach(Array.from({ length: 8 }), () =>
            Effect.forEach(Array.from({ length: 25 }), () => append(stream, ExpectedVersion.Any), { discard: true }),
            { concurrency: "unbounded", discard: true })
          const read = yield* store.readStream(stream)
          assert.deepStrictEqual(read.map((e) => e.version), Array.from({ length: 200 }, (_, i) => i + 1))
        }))

      it.effect("lets exactly one of several NoStream creators win", () =>
        Effect.gen(function*() {
          const stream = freshStream()
          const results = yield* Effect.forEach(Array.from({ length: 8 }), () =>
            Effect.result(append(stream, ExpectedVersion.NoStream)), { concurrency: "unbounded" })
          assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
        }))

      it.effect("agrees with a model of expected-version semantics on random histories", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const kind = fc.oneof(
            fc.constant(ExpectedVersion.Any),
            fc.constant(ExpectedVersion.NoStream),
            fc.constant(ExpectedVersion.StreamExists),
            fc.integer({ min: 0, max: 6 }).map(ExpectedVersion.Exact)
          )
          const step = fc.record({ stream: fc.integer({ min: 0, max: 2 }), expected: kind, count: fc.integer({ min: 0, max: 3 }) })
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
                const streams = [freshStream("p"), freshStream("p"), freshStream("p")]
                const model = [0, 0, 0]
                for (const { stream, expected, count } of steps) {
                  const outcome = await Effect.runPromise(Effect.result(store.append([{
                    stream: streams[stream]!,
                    expected,
                    events: Array.from({ length: count }, () => event("P"))
                  }])))
                  const accepted = ExpectedVersion.isSatisfiedBy(expected, model[stream]!)
                  if (accepted) {
                    model[stream] = model[stream]! + count
                    if (outcome._tag !== "Success") return false
                    if (outcome.success.versions.get(streams[stream]!) !== model[stream]) return false
                  } else if (outcome._tag !== "Failure" || outcome.failure._tag !== "WrongExpectedVersion" || outcome.failure.actual !== model[stream]) {
                    return false
                  }
                }
                for (const [i, name] of streams.entries()) {
                  const read = await Effect.runPromise(store.readStream(name))
                  if (read.length !== model[i]) return false
                }
                return true
              }),
              { numRuns: 40 }
            )
          )
        }))

      it.effect("reads the global log forward from a position", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const stream = freshStream()
          const written = (yield* append(stream, ExpectedVersion.NoStream, 5)).events
          const after = yield* store.readAll({ after: written[1]!.position, limit: 2 })
          assert.deepStrictEqual(after.map((e) => e.eventId), [written[2]!.eventId, written[3]!.eventId])
        }))

      it.effect("moves a checkpoint with its work, and refuses a stale one", () =>
        Effect.gen(function*() {
          const store = yield* EventStore
          const name = freshStream("checkpoint")
          const written = (yield* append(freshStream(), ExpectedVersion.NoStream, 2)).events
          assert.deepStrictEqual(yield* store.loadCheckpoint(name), start)
          const failed = yield* Effect.flip(store.commitCheckpoint(name, start, written[0]!.position, Effect.fail("boom" as const)))
          assert.strictEqual(failed, "boom")
          assert.deepStrictEqual(yield* store.loadCheckpoint(name), start)
          assert.strictEqual(yield* store.commitCheckpoint(name, start, written[0]!.position, Effect.succeed(7)), 7)
          assert.deepStrictEqual(yield* store.loadCheckpoint(name), written[0]!.position)
          const stale = yield* Effect.flip(store.commitCheckpoint(name, start, written[1]!.position, Effect.void))
          assert.strictEqual(stale._tag, "CheckpointConflict")
          yield* store.resetCheckpoint(name, Effect.void)
          assert.deepStrictEqual(yield* store.loadCheckpoint(name), start)
        }))

      it.effect("feeds an asynchronous projection every event exactly once, even with two competing runners", () =>
        Effect.gen(function*() {
          const stream = freshStream("projected")
          const seen = new Map<string, number>()
          const projection = {
            name: freshStream("counter"),
            apply: (events: ReadonlyArray<RecordedEvent>) =>
              Effect.sync(() => {
                for (const e of events) if (e.stream === stream) seen.set(e.eventId, (seen.get(e.eventId) ?? 0) + 1)
              }),
            reset: Effect.sync(() => seen.clear())
          }
          for (let i = 0; i < 10; i++) yield* append(stream, ExpectedVersion.Any, 7)
          yield* Effect.all([Subscription.catchUp(projection, 13), Subscription.catchUp(projection, 11)], { concurrency: 2 })
          assert.strictEqual(seen.size, 70)
          assert.isTrue([...seen.values()].every((n) => n === 1), "an event was applied twice")
          const rebuilt = yield* Subscription.rebuildProjection(projection)
          assert.isAtLeast(rebuilt, 70)
          assert.strictEqual(seen.size, 70)
          assert.isTrue([...seen.values()].every((n) => n === 1), "a rebuild applied an event twice")
        }))

      it.effect("delivers 10,000 events from 8 concurrent writers exactly once, live and on replay", () =>
        Effect.gen(function*() {
          const run = freshStream("race")
          const live = yield* collectLive((events) => events.filter((e) => e.stream.startsWith(run)).length >= 10_000)
          const ids = new Set<string>()
          yield* Effect.forEach(Array.from({ length: 8 }, (_, writer) => writer), (writer) =>
            Effect.forEach(Array.from({ length: 1250 }, (_, i) => i), (i) => {
              const eventId = crypto.randomUUID()
              ids.add(eventId)
              return EventStore.use((store) =>
                store.append([{ stream: `${run}-${writer}-${i % 5}`, expected: ExpectedVersion.Any, events: [{ eventId, type: "Raced", data: { writer, i } }] }])
              )
            }, { discard: true }), { concurrency: 8, discard: true })
          assertExactlyOnceInOrder(yield* live.waitFor, ids)
          assertExactlyOnceInOrder(yield* replay, ids)
        }), 180_000)

      if (options.openAppend !== undefined) {
        const openAppend = options.openAppend
        it.effect("delivers a slow transaction that took a lower position and committed after a later one was read", () =>
          Effect.scoped(Effect.gen(function*() {
            const [s1, s2] = [freshStream("slow"), freshStream("fast")]
            const ids = new Set<string>()
            const slow = yield* openAppend
            const live = yield* collectLive((events) => events.filter((e) => e.stream === s1 || e.stream === s2).length >= 2)
            const e1 = { eventId: crypto.randomUUID(), type: "Slow", data: {} }
            const e2 = { eventId: crypto.randomUUID(), type: "Fast", data: {} }
            ids.add(e1.eventId).add(e2.eventId)
            yield* slow.append([{ stream: s1, expected: ExpectedVersion.NoStream, events: [e1] }]) // T1 takes the lower position
            yield* EventStore.use((store) => store.append([{ stream: s2, expected: ExpectedVersion.NoStream, events: [e2] }]))
            yield* Effect.sleep("200 millis") // the live reader polls while T1 is still open
            yield* slow.commit
            const delivered = (yield* live.waitFor).filter((e) => e.eventId === e1.eventId || e.eventId === e2.eventId)
            assertExactlyOnceInOrder(delivered, ids)
            assertExactlyOnceInOrder((yield* replay).filter((e) => ids.has(e.eventId)), ids)
          })))

        it.effect("delivers a transaction that took its id first but its position last", () =>
          Effect.scoped(Effect.gen(function*() {
            const [s1, s2] = [freshStream("early"), freshStream("late")]
            const slow = yield* openAppend
            const live = yield* collectLive((events) => events.filter((e) => e.stream === s1 || e.stream === s2).length >= 2)
            yield* slow.begin // T1 takes its transaction id
            const fast = yield* append(s2, ExpectedVersion.NoStream) // T2 takes a lower position and commits
            yield* slow.append([{ stream: s1, expected: ExpectedVersion.NoStream, events: [event("Late")] }])
            yield* Effect.sleep("200 millis")
            yield* slow.commit
            const written = yield* EventStore.use((store) => store.readStream(s1))
            const ids = new Set([fast.events[0]!.eventId, written[0]!.eventId])
            assertExactlyOnceInOrder((yield* live.waitFor).filter((e) => ids.has(e.eventId)), ids)
            assertExactlyOnceInOrder((yield* replay).filter((e) => ids.has(e.eventId)), ids)
          })))
      }
    }))
