/**
 * The checkpointed runner's own economies, on the in-memory store: appends that follow one another are applied
 * in few batches, and the checkpoint it remembers instead of reading never makes it apply an event twice.
 */
import { EventStore, ExpectedVersion, MemoryEventStore, type RecordedEvent, Subscription } from "@cairn/event-store"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"

const appendOne = (stream: string) =>
  EventStore.use((store) => store.append([{ stream, expected: ExpectedVersion.Any, events: [{ type: "Happened", data: {} }] }]))

/** A projection that counts how often it saw each event, and its batches. */
const counting = (name: string) => {
  const seen = new Map<string, number>()
  const batches: Array<number> = []
  return {
    seen,
    batches,
    projection: {
      name,
      apply: (events: ReadonlyArray<RecordedEvent>) =>
        Effect.sync(() => {
          batches.push(events.length)
          for (const e of events) seen.set(e.eventId, (seen.get(e.eventId) ?? 0) + 1)
        }),
      reset: Effect.sync(() => seen.clear())
    }
  }
}

const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500 && !done(); i++) yield* Effect.sleep(10)
    assert.isTrue(done(), "the runner did not catch up")
  })

describe("a checkpointed runner", () => {
  it.live("gathers appends that follow one another into one batch", () =>
    Effect.gen(function*() {
      const { projection, seen, batches } = counting("gathering")
      yield* appendOne("before-1")
      const runner = yield* Effect.forkChild(Subscription.runProjection(projection, { pollMillis: 5_000, gatherMillis: 300 }))
      yield* until(() => seen.size === 1)
      for (let i = 0; i < 5; i++) {
        yield* appendOne(`steady-${i}`)
        yield* Effect.sleep(10)
      }
      yield* until(() => seen.size === 6)
      yield* Fiber.interrupt(runner)
      assert.deepStrictEqual(batches, [1, 5])
    }).pipe(Effect.provide(MemoryEventStore.layer())))

  it.live("reads its checkpoint again after another consumer moved it, and applies nothing twice", () =>
    Effect.gen(function*() {
      const { projection, seen } = counting("competing")
      const runner = yield* Effect.forkChild(Subscription.runProjection(projection, { pollMillis: 5_000, gatherMillis: 200 }))
      yield* appendOne("first")
      yield* until(() => seen.size === 1)
      // The runner is gathering after this append when another consumer applies it and moves the checkpoint.
      yield* appendOne("second")
      yield* Effect.sleep(20)
      yield* Subscription.catchUp(projection)
      yield* appendOne("third")
      yield* until(() => seen.size === 3)
      yield* Effect.sleep(300)
      yield* Fiber.interrupt(runner)
      assert.deepStrictEqual([...seen.values()], [1, 1, 1])
    }).pipe(Effect.provide(MemoryEventStore.layer())))
})
