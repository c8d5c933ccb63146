/**
 * Group commit: work that arrives while a write is in flight joins the next one, so concurrent callers share a
 * transaction (and its one fsync) instead of paying one commit each. At most one write is in flight, so a key is
 * never in two writes at once, and items with the same key never share a batch (a later one waits for the next,
 * in arrival order). One write in flight gathered the largest batches and measured best (decision 0029; two
 * batches in flight, the next sent while the last commits, measured no better either).
 *
 * A caller that finds nothing in flight and nobody waiting writes alone in its own fiber: a lone writer pays no
 * hand-off. Everyone else queues, and the writer fiber takes whatever has gathered as the next batch.
 *
 * `write` answers every item of its batch, in order, with that item's own outcome: one item's refusal is not the
 * others'. A defect in `write` reaches every caller of that batch.
 *
 * The bookkeeping is plain counters and arrays rather than a Semaphore, a Queue and a Deferred per caller: this runs
 * once per append, and those primitives (an uninterruptible mask, an exit hook, a waiter list each) were measurable
 * CPU per append (docs/performance.md, issue 17).
 */
import { Effect, Exit, type Scope } from "effect"

interface Pending<A, B> {
  readonly item: A
  readonly key: string
  readonly resume: (exit: Exit.Exit<B>) => void
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
  Effect.suspend(() => {
    // Arrived and not yet taken into a batch, in arrival order.
    let queue: Array<Pending<A, B>> = []
    // A write (lone or batch) is in flight.
    let inFlight = false
    // The writer fiber's wake-up while it waits for work or for the write in flight to end.
    let wakeWriter: (() => void) | undefined

    const canWrite = () => queue.length > 0 && !inFlight
    // Only when there is a batch to take: a lone write's end must not cost the writer fiber a scheduler hop.
    const notifyWriter = () => {
      const wake = wakeWriter
      if (wake !== undefined && canWrite()) {
        wakeWriter = undefined
        wake()
      }
    }
    // Re-checked at registration: the writer may have been scheduled out between deciding to wait and waiting.
    const idle = Effect.callback<void>((resume) => {
      if (canWrite()) resume(Effect.void)
      else wakeWriter = () => resume(Effect.void)
    })

    /** The next batch: the oldest item of each key, up to maxBatch; the rest stay queued in order. */
    const takeBatch = (): Array<Pending<A, B>> => {
      const batch: Array<Pending<A, B>> = []
      const left: Array<Pending<A, B>> = []
      const keys = new Set<string>()
      for (const pending of queue) {
        if (batch.length < options.maxBatch && !keys.has(pending.key)) {
          batch.push(pending)
          keys.add(pending.key)
        } else {
          left.push(pending)
        }
      }
      queue = left
      return batch
    }

    // A batch, once taken, is written and answered even if the store is closing meanwhile. Its callers are answered
    // while it still counts as in flight, so those that append again at once queue for the next batch together
    // instead of the first of them writing alone.
    const writeBatch = (batch: ReadonlyArray<Pending<A, B>>) =>
      Effect.uninterruptible(Effect.map(Effect.exit(options.write(batch.map((p) => p.item))), (exit) => {
        for (let i = 0; i < batch.length; i++) {
          batch[i]!.resume(Exit.isSuccess(exit) ? Exit.succeed(exit.value[i]!) : exit as Exit.Exit<never>)
        }
        inFlight = false
        notifyWriter()
      }))

    // Woken by an arrival or a finished write; it yields once first so that callers runnable now (those a batch
    // just answered) join the batch it takes.
    const step = Effect.flatMap(Effect.andThen(idle, Effect.yieldNow), () => {
      if (!canWrite()) return Effect.void
      inFlight = true
      return writeBatch(takeBatch())
    })

    const queued = (item: A, key: string) =>
      Effect.callback<B>((resume) => {
        queue.push({ item, key, resume })
        notifyWriter()
      })

    // A lone write counts as in flight from the moment it is taken to its exit, whatever that exit is; `taken` tells
    // the exit hook whether this caller wrote alone or queued instead.
    const submit = (item: A): Effect.Effect<B> => {
      const key = options.keyOf(item)
      let taken = false
      return Effect.onExit(
        Effect.suspend(() => {
          if (inFlight || queue.length > 0) return queued(item, key)
          taken = true
          inFlight = true
          return Effect.map(options.write([item]), (results) => results[0]!)
        }),
        () => {
          if (taken) {
            inFlight = false
            notifyWriter()
          }
          return Effect.void
        }
      )
    }

    return Effect.as(Effect.forkScoped(Effect.forever(step)), { submit })
  })
