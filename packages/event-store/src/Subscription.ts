/**
 * Catch-up consumers of the global log, the same for every adapter. `subscribe` streams every event after a
 * position and then follows new ones. `runProjection` feeds an asynchronous projection in batches, committing
 * each batch's read-model writes and its checkpoint in one transaction, so every event is applied exactly once
 * even across restarts and competing consumers. A runner gathers the appends that follow one another into one batch
 * (`gatherMillis`): each batch costs a read, a transaction and the checkpoint's write, whatever its size.
 */
import { Effect, Stream } from "effect"
import { EventStore } from "./EventStore.ts"
import { type EventStoreUnavailable, ProjectionFailed } from "./EventStoreError.ts"
import type { Projection } from "./Projection.ts"
import type { LogPosition, RecordedEvent } from "./RecordedEvent.ts"

export interface FollowOptions {
  readonly batchSize?: number
  /** How long to wait for an in-process append before reading again (appends of other processes). */
  readonly pollMillis?: number
  /**
   * `runProjection` only: once caught up and woken by an append, how long to let further appends arrive before
   * reading them, so a steady stream of appends (sequential uploads) is applied a few at a time instead of one
   * transaction per append. It is how far behind the log an asynchronous read model may fall on purpose.
   */
  readonly gatherMillis?: number
}

const defaults = { batchSize: 500, pollMillis: 250, gatherMillis: 100 }

/**
 * A checkpointed consumer far behind doubles its batch while batches come back full, up to this many events: each
 * batch pays a checkpoint commit and a few round trips, which a bigger batch spreads over more events. It starts
 * again from the batch size it was given once it has caught up.
 */
const largestCatchUpBatch = 8_000

const grown = (batchSize: number, step: Step, size: number) =>
  step._tag === "Applied" && step.events === size ? Math.min(size * 2, Math.max(batchSize, largestCatchUpBatch)) : batchSize

/** Every event after `after`, in log order, then new events as they commit. Never ends by itself. */
export const subscribe = (
  after: LogPosition,
  options: FollowOptions = {}
): Stream.Stream<RecordedEvent, EventStoreUnavailable, EventStore> =>
  Stream.unwrap(Effect.gen(function*() {
    const store = yield* EventStore
    const { batchSize, pollMillis } = { ...defaults, ...options }
    let cursor = after
    const nextBatch = Effect.gen(function*() {
      for (;;) {
        const seen = yield* store.appendCount
        const events = yield* store.readAll({ after: cursor, limit: batchSize })
        if (events.length > 0) {
          cursor = events[events.length - 1]!.position
          return events
        }
        yield* store.awaitAppend(seen, pollMillis)
      }
    })
    return Stream.fromEffectRepeat(nextBatch).pipe(Stream.flatMap(Stream.fromIterable))
  }))

/** What one step of a checkpointed consumer did. */
export type Step =
  | { readonly _tag: "CaughtUp" }
  | { readonly _tag: "Applied"; readonly events: number }
  /** Another consumer of the same name committed this batch first; this one's writes were rolled back. */
  | { readonly _tag: "LostRace" }

/** One batch applied from `from` (the checkpoint as last read or committed), and where the checkpoint is now. */
const stepFrom = <R>(projection: Projection<R>, from: LogPosition, batchSize: number) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const events = yield* store.readAll({ after: from, limit: batchSize })
    if (events.length === 0) return { step: { _tag: "CaughtUp" } as Step, at: from }
    const to = events[events.length - 1]!.position
    const apply = projection.apply(events).pipe(
      Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
    )
    return yield* store.commitCheckpoint(projection.name, from, to, apply).pipe(
      Effect.as({ step: { _tag: "Applied", events: events.length } as Step, at: to }),
      Effect.catchTag("CheckpointConflict", () => Effect.succeed({ step: { _tag: "LostRace" } as Step, at: from }))
    )
  })

/** Applies one batch past the projection's checkpoint, atomically with moving the checkpoint. */
export const stepProjection = <R>(projection: Projection<R>, batchSize = defaults.batchSize) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const from = yield* store.loadCheckpoint(projection.name)
    return (yield* stepFrom(projection, from, batchSize)).step
  })

/**
 * Steps a projection on from the checkpoint this consumer last committed, read from the store only at first and
 * after another consumer moved it (a lost race): a conditional commit refuses a stale position, so remembering it
 * never applies an event twice, and it saves a read per batch.
 */
const stepper = <R>(projection: Projection<R>) => {
  let from: LogPosition | undefined
  return (batchSize: number) =>
    Effect.gen(function*() {
      from ??= yield* (yield* EventStore).loadCheckpoint(projection.name)
      const { step, at } = yield* stepFrom(projection, from, batchSize)
      from = step._tag === "LostRace" ? undefined : at
      return step
    })
}

/** Applies batches until the projection has caught up with the readable log. Returns the events applied. */
export const catchUp = <R>(projection: Projection<R>, batchSize = defaults.batchSize) =>
  Effect.gen(function*() {
    const step = stepper(projection)
    let total = 0
    for (let size = batchSize;;) {
      const done = yield* step(size)
      if (done._tag === "CaughtUp") return total
      if (done._tag === "Applied") total += done.events
      size = grown(batchSize, done, size)
    }
  })

const setup = <R>(projection: Projection<R>) =>
  (projection.setup ?? Effect.void).pipe(
    Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
  )

/** Keeps an asynchronous projection up to date for as long as it runs. */
export const runProjection = <R>(projection: Projection<R>, options: FollowOptions = {}) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    yield* setup(projection)
    const { batchSize, pollMillis, gatherMillis } = { ...defaults, ...options }
    const step = stepper(projection)
    for (let size = batchSize;;) {
      const seen = yield* store.appendCount
      const done = yield* step(size)
      // A batch that came back short read all there was, like an empty one: no read just to learn that.
      if (done._tag === "CaughtUp" || (done._tag === "Applied" && done.events < size)) {
        yield* store.awaitAppend(seen, pollMillis)
        if (gatherMillis > 0 && (yield* store.appendCount) !== seen) yield* Effect.sleep(gatherMillis)
      }
      size = grown(batchSize, done, size)
    }
  })

/** Empties an asynchronous projection and its checkpoint together, then catches it up from the start. */
export const rebuildProjection = <R>(projection: Projection<R>, batchSize = defaults.batchSize) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    yield* setup(projection)
    yield* store.resetCheckpoint(
      projection.name,
      projection.reset.pipe(Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause })))
    )
    return yield* catchUp(projection, batchSize)
  })
