/**
 * Catch-up consumers of the global log, the same for every adapter. `subscribe` streams every event after a
 * position and then follows new ones. `runProjection` feeds an asynchronous projection in batches, committing
 * each batch's read-model writes and its checkpoint in one transaction, so every event is applied exactly once
 * even across restarts and competing consumers.
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
}

const defaults = { batchSize: 500, pollMillis: 250 }

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

/** Applies one batch past the projection's checkpoint, atomically with moving the checkpoint. */
export const stepProjection = <R>(projection: Projection<R>, batchSize = defaults.batchSize) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const from = yield* store.loadCheckpoint(projection.name)
    const events = yield* store.readAll({ after: from, limit: batchSize })
    if (events.length === 0) return { _tag: "CaughtUp" } as Step
    const to = events[events.length - 1]!.position
    const apply = projection.apply(events).pipe(
      Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
    )
    return yield* store.commitCheckpoint(projection.name, from, to, apply).pipe(
      Effect.as<Step>({ _tag: "Applied", events: events.length }),
      Effect.catchTag("CheckpointConflict", () => Effect.succeed<Step>({ _tag: "LostRace" }))
    )
  })

/** Applies batches until the projection has caught up with the readable log. Returns the events applied. */
export const catchUp = <R>(projection: Projection<R>, batchSize = defaults.batchSize) =>
  Effect.gen(function*() {
    let total = 0
    for (let size = batchSize;;) {
      const step = yield* stepProjection(projection, size)
      if (step._tag === "CaughtUp") return total
      if (step._tag === "Applied") total += step.events
      size = grown(batchSize, step, size)
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
    const { batchSize, pollMillis } = { ...defaults, ...options }
    for (let size = batchSize;;) {
      const seen = yield* store.appendCount
      const step = yield* stepProjection(projection, size)
      if (step._tag === "CaughtUp") yield* store.awaitAppend(seen, pollMillis)
      size = grown(batchSize, step, size)
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
