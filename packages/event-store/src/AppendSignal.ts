/**
 * Wakes in-process readers when this process appends, so live subscribers see new events at once instead of at
 * their next poll. Appends from other processes are found by polling.
 *
 * `notify` runs once per append, so it only counts unless a reader waits: the Deferred that wakes readers is made
 * by the first reader that waits on it, not by every append (a Deferred per append was measurable CPU under load).
 */
import { Deferred, Effect, Exit } from "effect"

export interface AppendSignal {
  readonly count: Effect.Effect<number>
  readonly notify: Effect.Effect<void>
  /** `notify` for code already inside an Effect step of its own (the append's answer). */
  readonly notifyUnsafe: () => void
  readonly await: (seen: number, timeoutMillis: number) => Effect.Effect<void>
}

export const make: Effect.Effect<AppendSignal> = Effect.sync(() => {
  let count = 0
  let next: Deferred.Deferred<void> | undefined
  const notifyUnsafe = () => {
    count++
    if (next !== undefined) {
      const woken = next
      next = undefined
      Deferred.doneUnsafe(woken, Exit.void)
    }
  }
  const wait = (seen: number, timeoutMillis: number) =>
    Effect.suspend(() => {
      if (count !== seen) return Effect.void
      next ??= Deferred.makeUnsafe<void>()
      return Deferred.await(next).pipe(Effect.timeoutOption(timeoutMillis), Effect.asVoid)
    })
  return { count: Effect.sync(() => count), notify: Effect.sync(notifyUnsafe), notifyUnsafe, await: wait }
})
