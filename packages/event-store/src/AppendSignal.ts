/**
 * Wakes in-process readers when this process appends, so live subscribers see new events at once instead of at
 * their next poll. Appends from other processes are found by polling.
 */
import { Deferred, Effect } from "effect"

export interface AppendSignal {
  readonly count: Effect.Effect<number>
  readonly notify: Effect.Effect<void>
  readonly await: (seen: number, timeoutMillis: number) => Effect.Effect<void>
}

export const make: Effect.Effect<AppendSignal> = Effect.gen(function*() {
  let count = 0
  let next = yield* Deferred.make<void>()
  const notify = Effect.gen(function*() {
    count++
    const woken = next
    next = yield* Deferred.make<void>()
    yield* Deferred.succeed(woken, undefined)
  })
  const wait = (seen: number, timeoutMillis: number) =>
    Effect.suspend(() =>
      count !== seen
        ? Effect.void
        : Deferred.await(next).pipe(Effect.timeoutOption(timeoutMillis), Effect.asVoid)
    )
  return { count: Effect.sync(() => count), notify, await: wait }
})
