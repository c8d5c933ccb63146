import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as GroupCommit from "../src/GroupCommit.ts"

/** A group commit over "key:n" items whose first write waits for `gate`, recording every batch it is given. */
const recording = Effect.gen(function*() {
  const gate = yield* Deferred.make<void>()
  const batches: Array<ReadonlyArray<string>> = []
  const commit = yield* GroupCommit.make({
    keyOf: (item: string) => item.split(":")[0]!,
    maxBatch: 3,
    write: (batch) =>
      Effect.gen(function*() {
        batches.push(batch)
        if (batches.length === 1) yield* Deferred.await(gate)
        return batch.map((item) => `wrote ${item}`)
      })
  })
  // Started at once, so each submission has reached the group commit when the fork returns.
  const submit = (item: string) => Effect.forkChild(commit.submit(item), { startImmediately: true })
  return { gate, batches, submit }
})

describe("GroupCommit", () => {
  it.effect("writes a lone caller alone, and gathers callers that arrive meanwhile into the next batch", () =>
    Effect.scoped(Effect.gen(function*() {
      const { gate, batches, submit } = yield* recording
      const first = yield* submit("a:1")
      assert.deepStrictEqual(batches, [["a:1"]])
      const later = yield* Effect.forEach(["b:1", "c:1", "b:2", "d:1", "e:1"], submit)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), "wrote a:1")
      assert.deepStrictEqual(yield* Effect.forEach(later, Fiber.join), ["wrote b:1", "wrote c:1", "wrote b:2", "wrote d:1", "wrote e:1"])
      // b:2 waits for the batch after b:1's; a batch holds at most maxBatch items.
      assert.deepStrictEqual(batches, [["a:1"], ["b:1", "c:1", "d:1"], ["b:2", "e:1"]])
    })))

  it.effect("hands a defect in a write to every caller of that batch, and goes on writing", () =>
    Effect.scoped(Effect.gen(function*() {
      let calls = 0
      const commit = yield* GroupCommit.make({
        keyOf: (item: string) => item,
        maxBatch: 10,
        write: (batch) => ++calls === 1 ? Effect.die("broken") : Effect.succeed(batch)
      })
      const failed = yield* Effect.exit(commit.submit("x"))
      assert.isTrue(failed._tag === "Failure")
      assert.strictEqual(yield* commit.submit("y"), "y")
    })))

  it.effect("does not keep later callers waiting when a lone writer is interrupted", () =>
    Effect.scoped(Effect.gen(function*() {
      const never = yield* Deferred.make<void>()
      let calls = 0
      const commit = yield* GroupCommit.make({
        keyOf: (item: string) => item,
        maxBatch: 10,
        write: (batch) => Effect.as(++calls === 1 ? Deferred.await(never) : Effect.void, batch)
      })
      const first = yield* Effect.forkChild(commit.submit("a"), { startImmediately: true })
      yield* Fiber.interrupt(first)
      assert.strictEqual(yield* commit.submit("b"), "b")
      const [c, d] = yield* Effect.all([commit.submit("c"), commit.submit("d")], { concurrency: 2 })
      assert.deepStrictEqual([c, d], ["c", "d"])
    })))
})
