/**
 * The EventStore port held in process memory, for tests and the simulated runtime. It keeps the same contract as
 * the Postgres adapter (the shared suite in testing/EventStoreContract.ts proves it); appends are serialised, so
 * its log order is simply append order.
 */
import { Effect, Layer, Semaphore } from "effect"
import * as Append from "./Append.ts"
import * as AppendSignal from "./AppendSignal.ts"
import { EventStore } from "./EventStore.ts"
import { CheckpointConflict, IdempotencyConflict, ProjectionFailed, UnknownProjection, WrongExpectedVersion } from "./EventStoreError.ts"
import * as ExpectedVersion from "./ExpectedVersion.ts"
import type { Projection } from "./Projection.ts"
import { compare, type LogPosition, type RecordedEvent, start } from "./RecordedEvent.ts"

export interface Options {
  readonly inlineProjections?: ReadonlyArray<Projection>
  /** Where `recordedAt` comes from; the wall clock by default. */
  readonly now?: () => Date
}

/** Index of the first event after `position` in a log sorted by position. */
const firstAfter = (log: ReadonlyArray<RecordedEvent>, position: LogPosition): number => {
  let low = 0
  let high = log.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compare(log[middle]!.position, position) <= 0) low = middle + 1
    else high = middle
  }
  return low
}

export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const now = options.now ?? (() => new Date())
    const inline = options.inlineProjections ?? []
    const log: Array<RecordedEvent> = []
    const streams = new Map<string, Array<RecordedEvent>>()
    const byId = new Map<string, RecordedEvent>()
    const checkpoints = new Map<string, LogPosition>()
    let transactionId = 0n
    let globalPosition = 0n
    const lock = yield* Semaphore.make(1)
    const signal = yield* AppendSignal.make
    for (const projection of inline) {
      if (projection.setup) yield* projection.setup.pipe(Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause })))
    }

    const versionOf = (stream: string) => streams.get(stream)?.length ?? 0

    const applyInline = (projections: ReadonlyArray<Projection>, events: ReadonlyArray<RecordedEvent>) =>
      Effect.forEach(projections, (projection) =>
        projection.apply(events).pipe(
          Effect.mapError((cause) => new ProjectionFailed({ projection: projection.name, cause }))
        ), { discard: true })

    const append = (appends: Parameters<EventStore["Service"]["append"]>[0]) =>
      Effect.gen(function*() {
        const prepared = yield* Append.prepare(appends)
        const wanted = prepared.flatMap((s) => s.events.map((e) => ({ stream: s.stream, eventId: e.eventId })))
        const committed = wanted.filter(({ eventId }) => byId.has(eventId))
        if (committed.length > 0) {
          const sameStreams = committed.every(({ eventId, stream }) => byId.get(eventId)!.stream === stream)
          if (committed.length < wanted.length || !sameStreams) {
            return yield* new IdempotencyConflict({ eventIds: committed.map((c) => c.eventId) })
          }
          return {
            events: wanted.map(({ eventId }) => byId.get(eventId)!),
            versions: new Map(prepared.map((s) => [s.stream, versionOf(s.stream)])),
            duplicate: true
          }
        }
        for (const { stream, expected } of prepared) {
          const actual = versionOf(stream)
          if (!ExpectedVersion.isSatisfiedBy(expected, actual)) {
            return yield* new WrongExpectedVersion({ stream, expected: ExpectedVersion.describe(expected), actual })
          }
        }
        const tx = transactionId + 1n
        let position = globalPosition
        const recordedAt = now()
        const written = prepared.flatMap(({ stream, events }) =>
          events.map(({ eventId, type, dataJson, metadata }, index): RecordedEvent => ({
            eventId,
            type,
            // A copy, as a database would keep: the caller's value may be held by the answer only.
            data: JSON.parse(dataJson),
            metadata,
            stream,
            version: versionOf(stream) + index + 1,
            position: { transactionId: tx, globalPosition: ++position },
            recordedAt
          }))
        )
        yield* applyInline(inline, written)
        transactionId = tx
        globalPosition = position
        for (const event of written) {
          log.push(event)
          byId.set(event.eventId, event)
          const events = streams.get(event.stream) ?? []
          events.push(event)
          streams.set(event.stream, events)
        }
        yield* signal.notify
        return {
          events: written,
          versions: new Map(prepared.map((s) => [s.stream, versionOf(s.stream)])),
          duplicate: false
        }
      }).pipe(Semaphore.withPermit(lock))

    return EventStore.of({
      append,
      readStream: (stream, { fromVersion = 1, limit = Number.MAX_SAFE_INTEGER } = {}) =>
        Effect.sync(() => (streams.get(stream) ?? []).slice(Math.max(fromVersion, 1) - 1, Math.max(fromVersion, 1) - 1 + limit)),
      readAll: ({ after, limit }) =>
        Effect.sync(() => {
          const from = firstAfter(log, after)
          return log.slice(from, from + limit)
        }),
      appendCount: signal.count,
      awaitAppend: signal.await,
      loadCheckpoint: (name) => Effect.sync(() => checkpoints.get(name) ?? start),
      commitCheckpoint: (name, from, to, work) =>
        Effect.gen(function*() {
          if (compare(checkpoints.get(name) ?? start, from) !== 0) return yield* new CheckpointConflict({ name })
          const result = yield* work
          checkpoints.set(name, to)
          return result
        }).pipe(Semaphore.withPermit(lock)),
      resetCheckpoint: (name, work) =>
        work.pipe(Effect.tap(() => Effect.sync(() => checkpoints.delete(name))), Semaphore.withPermit(lock)),
      rebuildInline: (name) =>
        Effect.gen(function*() {
          const projection = inline.find((p) => p.name === name)
          if (projection === undefined) {
            return yield* new ProjectionFailed({ projection: name, cause: new UnknownProjection({ projection: name }) })
          }
          yield* projection.reset.pipe(Effect.mapError((cause) => new ProjectionFailed({ projection: name, cause })))
          yield* applyInline([projection], log)
          return log.length
        }).pipe(Semaphore.withPermit(lock)),
      ping: Effect.void,
      inlineProjections: inline.map((p) => p.name)
    })
  })

export const layer = (options: Options = {}) => Layer.effect(EventStore, make(options))
