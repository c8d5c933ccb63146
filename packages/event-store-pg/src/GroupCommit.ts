/**
 * Group commit: work that arrives while a write is in flight joins the next one, so concurrent callers share a
 * transaction (and its one fsync) instead of paying one commit each. At most one write is in flight, so a key is
 * never in two writes at once, and items with the same key never share a batch (a later one waits for the next,
 * in arrival order). One write in flight gathered the largest batches and measured best (decision 0029).
 *
 * A caller that finds nothing in flight and nobody waiting writes alone in its own fiber: a lone writer pays no
 * hand-off. Everyone else queues, and the writer fiber takes whatever has gathered as the next batch.
 *
 * `write` answers every item of its batch, in order, with that item's own outcome: one item's refusal is not the
 * others'. A defect in `write` reaches every caller of that batch.
 */
import { Deferred, Effect, Exit, Option, Queue, type Scope, Semaphore } from "effect"

interface Pending<A, B> {
  readonly item: A
  readonly done: Deferred.Deferred<B>
}

export interface GroupCommit<A, B> {
  readonly submit: (item: A) => Effect.Effect<B>
}

export interface Options<A, B> {
  readonly keyOf: (item: A) => string
  readonly maxBatch: number
  readonly write: (batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>>
}

export const make = <A, B>(options: Options<A, B>): Effect.Effect<GroupCommit<A, B>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending<A, B>>()
    const inFlight = yield* Semaphore.make(1)
    // Queued, or taken and not yet written: while any wait, a newcomer queues behind them instead of writing alone.
    let waiting = 0
    // Taken from the queue but left for a later batch, because their key is in the current one.
    let held: Array<Pending<A, B>> = []

    const nextBatch = Effect.gen(function*() {
      const arrived = held.length === 0 ? yield* Queue.takeAll(queue) : yield* Queue.clear(queue)
      const candidates = [...held, ...arrived]
      const batch: Array<Pending<A, B>> = []
      const keys = new Set<string>()
      held = []
      for (const pending of candidates) {
        const key = options.keyOf(pending.item)
        if (batch.length < options.maxBatch && !keys.has(key)) {
          batch.push(pending)
          keys.add(key)
        } else {
          held.push(pending)
        }
      }
      return batch
    })

    // A batch, once taken, is written and answered even if the store is closing meanwhile.
    const writeBatch = (batch: ReadonlyArray<Pending<A, B>>) =>
      Effect.suspend(() => {
        waiting -= batch.length
        return Effect.exit(options.write(batch.map((p) => p.item)))
      }).pipe(
        Effect.flatMap((exit) =>
          Effect.forEach(batch, (pending, i) =>
            Deferred.done(pending.done, Exit.isSuccess(exit) ? Exit.succeed(exit.value[i]!) : exit as Exit.Exit<never>), { discard: true })
        ),
        Semaphore.withPermit(inFlight),
        Effect.uninterruptible
      )

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(nextBatch, writeBatch)))

    const queued = (item: A) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<B>()
        waiting++
        yield* Queue.offer(queue, { item, done })
        return yield* Deferred.await(done)
      })

    const alone = (item: A) =>
      Effect.map(options.write([item]), (results) => results[0]!).pipe(Semaphore.withPermitsIfAvailable(inFlight, 1))

    return {
      submit: (item: A) =>
        Effect.suspend(() =>
          waiting > 0
            ? queued(item)
            : Effect.flatMap(alone(item), (written) => Option.isSome(written) ? Effect.succeed(written.value) : queued(item))
        )
    }
  })
