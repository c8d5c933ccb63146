/**
 * The command handler over the in-memory event store, with a tiny quota decider: a counter that lets `limit`
 * takers in. A "rival" store appends to a stream just before the handler's own append, which is how a concurrent
 * writer winning the race looks from inside the handler.
 */
import { CommandHandler, decision, emptyStream, MaxAttempts, unreadDecision } from "@cairn/application"
import type { Decider } from "@cairn/domain"
import { EventStore, ExpectedVersion, MemoryEventStore } from "@cairn/event-store"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Match, Result, Schema } from "effect"

class Take extends Schema.TaggedClass<Take>()("Take", { by: Schema.String, limit: Schema.Int }) {}
/** Records nothing: asserts there is room, as `RequireWorkspace` asserts a workspace exists. */
class RequireRoom extends Schema.TaggedClass<RequireRoom>()("RequireRoom", { limit: Schema.Int }) {}
type QuotaCommand = Take | RequireRoom

class Taken extends Schema.TaggedClass<Taken>()("Taken", { by: Schema.String }) {}
const QuotaEvent = Schema.Union([Taken])

class QuotaFull extends Schema.TaggedError<QuotaFull>()("QuotaFull", { limit: Schema.Int }) {}

const room = (count: number, limit: number) => (count < limit ? Result.succeed(count) : Result.fail(new QuotaFull({ limit })))

const quota: Decider<QuotaCommand, Taken, number, QuotaFull> = {
  initial: 0,
  decide: (command, count) =>
    Match.valueTags(command, {
      Take: ({ by, limit }) => Result.map(room(count, limit), (): ReadonlyArray<Taken> => [new Taken({ by })]),
      RequireRoom: ({ limit }) => Result.map(room(count, limit), (): ReadonlyArray<Taken> => [])
    }),
  evolve: (count) => count + 1,
  events: QuotaEvent
}

const actor = { actor: "tester" }
const encodeTaken = Schema.encodeSync(QuotaEvent)

/** A fresh in-memory store with the handler over it. */
const fresh = () => CommandHandler.layer.pipe(Layer.provideMerge(MemoryEventStore.layer()))

/** A fresh store where a rival takes a slot of `stream` just before each of the handler's first `races` appends. */
const rivalled = (stream: string, races = 1) => {
  const store = Layer.effect(
    EventStore,
    Effect.gen(function*() {
      const memory = yield* EventStore
      let left = races
      const rival = memory.append([{
        stream,
        expected: ExpectedVersion.Any,
        events: [{ type: "Taken", data: encodeTaken(new Taken({ by: "rival" })) }]
      }])
      return {
        ...memory,
        append: (appends) => (left-- > 0 ? Effect.andThen(rival, memory.append(appends)) : memory.append(appends))
      } satisfies EventStore["Service"]
    })
  ).pipe(Layer.provide(MemoryEventStore.layer()))
  return CommandHandler.layer.pipe(Layer.provideMerge(store))
}

/** A fresh store that runs `after` once each stream read by the handler has been read. */
const afterReads = (after: (stream: string) => Effect.Effect<void>) => {
  const store = Layer.effect(
    EventStore,
    Effect.gen(function*() {
      const memory = yield* EventStore
      return {
        ...memory,
        readStream: (stream, options) => Effect.tap(memory.readStream(stream, options), () => after(stream))
      } satisfies EventStore["Service"]
    })
  ).pipe(Layer.provide(MemoryEventStore.layer()))
  return CommandHandler.layer.pipe(Layer.provideMerge(store))
}

/** A fresh store that counts the streams the handler reads. */
const counted = (reads: Array<string>) => afterReads((stream) => Effect.sync(() => reads.push(stream)))

/** A fresh store whose reads let other fibers run, so concurrent commands all read before any of them appends. */
const interleaved = () => afterReads(() => Effect.yieldNow)

const takers = (stream: string) =>
  EventStore.use((store) => store.readStream(stream)).pipe(
    Effect.map((events) => events.map((e) => (e.data as { readonly by: string }).by))
  )

describe("the command handler", () => {
  it.effect("appends what was decided, encoded, with the actor, and returns the state after it", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const first = yield* commands.execute(quota, "quota-1", new Take({ by: "a", limit: 5 }), actor)
      assert.deepStrictEqual(first, { events: [new Taken({ by: "a" })], state: 1, version: 1 })
      yield* commands.execute(quota, "quota-1", new Take({ by: "b", limit: 5 }), actor)
      const recorded = yield* EventStore.use((store) => store.readStream("quota-1"))
      assert.deepStrictEqual(recorded.map((e) => [e.version, e.type, e.data, e.metadata.actor]), [
        [1, "Taken", { _tag: "Taken", by: "a" }, "tester"],
        [2, "Taken", { _tag: "Taken", by: "b" }, "tester"]
      ])
      assert.deepStrictEqual(yield* commands.load(quota, "quota-1"), { state: 2, version: 2 })
    }).pipe(Effect.provide(fresh())))

  it.effect("decides again after a concurrent writer wins, and appends after the winner's event", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const outcome = yield* commands.execute(quota, "quota-1", new Take({ by: "a", limit: 2 }), actor)
      assert.strictEqual(outcome.state, 2)
      assert.deepStrictEqual(yield* takers("quota-1"), ["rival", "a"])
    }).pipe(Effect.provide(rivalled("quota-1"))))

  it.effect("refuses on the second decision what the winner made impossible", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const error = yield* Effect.flip(commands.execute(quota, "quota-1", new Take({ by: "a", limit: 1 }), actor))
      assert.deepStrictEqual(error, new QuotaFull({ limit: 1 }))
      assert.deepStrictEqual(yield* takers("quota-1"), ["rival"])
    }).pipe(Effect.provide(rivalled("quota-1"))))

  it.effect("lets exactly `limit` of many concurrent takers in, though they all read before anyone appends", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const results = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => `t${i}`),
        (by) => Effect.result(commands.execute(quota, "quota-1", new Take({ by, limit: 5 }), actor)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter(Result.isSuccess).length, 5)
      assert.isTrue(results.filter(Result.isFailure).every((r) => r.failure._tag === "QuotaFull"))
      assert.strictEqual((yield* takers("quota-1")).length, 5)
    }).pipe(Effect.provide(interleaved())))

  it.effect("gives up with 409 TooMuchContention after MaxAttempts lost races", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const error = yield* Effect.flip(commands.execute(quota, "quota-1", new Take({ by: "a", limit: 5 }), actor))
      assert.strictEqual(error._tag, "TooMuchContention")
      assert.isTrue(error._tag === "TooMuchContention" && error.status === 409)
      assert.deepStrictEqual(error._tag === "TooMuchContention" ? error.streams : [], ["quota-1"])
      assert.deepStrictEqual(yield* takers("quota-1"), ["rival"])
    }).pipe(Effect.provideService(MaxAttempts, 1), Effect.provide(rivalled("quota-1"))))

  it.effect("records nothing when the decision is empty", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const outcome = yield* commands.execute(quota, "quota-1", new RequireRoom({ limit: 1 }), actor)
      assert.deepStrictEqual(outcome, { events: [], state: 0, version: 0 })
      assert.deepStrictEqual(yield* takers("quota-1"), [])
    }).pipe(Effect.provide(fresh())))

  it.effect("still guards the version a stream with nothing to record was decided on", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      // The rival fills the quota between the check and the append: the other stream's event must not be written.
      const error = yield* Effect.flip(commands.executeAll([
        decision(quota, "quota-1", new RequireRoom({ limit: 1 })),
        decision(quota, "quota-2", new Take({ by: "a", limit: 5 }))
      ], actor))
      assert.deepStrictEqual(error, new QuotaFull({ limit: 1 }))
      assert.deepStrictEqual(yield* takers("quota-2"), [])
    }).pipe(Effect.provide(rivalled("quota-1"))))

  it.effect("returns the refusal of decide as a typed failure, recording nothing", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const refused = yield* Effect.result(commands.execute(quota, "quota-1", new Take({ by: "a", limit: 0 }), actor))
      assert.isTrue(Result.isFailure(refused) && refused.failure instanceof QuotaFull && refused.failure.limit === 0)
      assert.deepStrictEqual(yield* takers("quota-1"), [])
    }).pipe(Effect.provide(fresh())))

  it.effect("appends every decision of executeAll together, each on its own stream", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      const [one, two] = yield* commands.executeAll([
        decision(quota, "quota-1", new Take({ by: "a", limit: 5 })),
        decision(quota, "quota-2", new Take({ by: "b", limit: 5 }))
      ], actor)
      assert.deepStrictEqual([one.state, two.state], [1, 1])
      assert.deepStrictEqual([yield* takers("quota-1"), yield* takers("quota-2")], [["a"], ["b"]])
    }).pipe(Effect.provide(fresh())))
  it.effect("appends an unread decision after whatever its stream holds, without reading or guarding it", () => {
    const reads: Array<string> = []
    return Effect.gen(function*() {
      const commands = yield* CommandHandler
      yield* commands.execute(quota, "quota-2", new Take({ by: "earlier", limit: 5 }), actor)
      reads.length = 0
      const [guarded, unread] = yield* commands.executeAll([
        decision(quota, "quota-1", new Take({ by: "a", limit: 5 })),
        // Decided on the initial state: a limit of 1 lets it in though the stream already holds a taker.
        unreadDecision(quota, "quota-2", new Take({ by: "b", limit: 1 }))
      ], actor)
      assert.deepStrictEqual(reads, ["quota-1"])
      assert.deepStrictEqual([guarded.state, unread.state], [1, 1])
      assert.deepStrictEqual(yield* takers("quota-2"), ["earlier", "b"])
      // Nothing decided on an unread stream appends nothing there.
      yield* commands.executeAll([unreadDecision(quota, "quota-3", new RequireRoom({ limit: 1 }))], actor)
      assert.deepStrictEqual(yield* takers("quota-3"), [])
    }).pipe(Effect.provide(counted(reads)))
  })

  it.effect("does not lose a race on an unread stream: a rival's append there is not a conflict", () =>
    Effect.gen(function*() {
      const commands = yield* CommandHandler
      yield* commands.executeAll([unreadDecision(quota, "quota-1", new Take({ by: "a", limit: 1 }))], actor)
      assert.deepStrictEqual(yield* takers("quota-1"), ["rival", "a"])
    }).pipe(Effect.provideService(MaxAttempts, 1), Effect.provide(rivalled("quota-1"))))

  it.effect("decides a stream known to be empty without reading it, and still guards it at version 0", () => {
    const reads: Array<string> = []
    return Effect.gen(function*() {
      const commands = yield* CommandHandler
      const outcome = yield* commands.execute(quota, "quota-1", new Take({ by: "a", limit: 1 }), actor, emptyStream(quota))
      assert.deepStrictEqual([outcome.state, reads], [1, []])
      // A stream that is not empty after all refuses the guard, and the decision is made again on what it holds.
      const error = yield* Effect.flip(commands.execute(quota, "quota-1", new Take({ by: "b", limit: 1 }), actor, emptyStream(quota)))
      assert.deepStrictEqual([error, reads], [new QuotaFull({ limit: 1 }), ["quota-1"]])
      assert.deepStrictEqual(yield* takers("quota-1"), ["a"])
    }).pipe(Effect.provide(counted(reads)))
  })
})
