/**
 * The event store port: atomic appends to one or several streams with expected versions, reads of one stream or
 * of the global log, and durable checkpoints for consumers that must see every event exactly once.
 * Adapters: MemoryEventStore (here), PgEventStore (@cairn/event-store-pg, for Postgres and embedded PGlite).
 */
import { Context, type Effect } from "effect"
import type { AppendError, CheckpointConflict, EventStoreUnavailable, ProjectionFailed } from "./EventStoreError.ts"
import type { ExpectedVersion } from "./ExpectedVersion.ts"
import type { LogPosition, NewEvent, RecordedEvent } from "./RecordedEvent.ts"

export interface StreamAppend {
  readonly stream: string
  readonly expected: ExpectedVersion
  readonly events: ReadonlyArray<NewEvent>
}

export interface AppendResult {
  /** The events as stored, in log order (streams in name order, each stream's events as given). */
  readonly events: ReadonlyArray<RecordedEvent>
  /** Each stream's version after the append: the expected version for the next one. */
  readonly versions: ReadonlyMap<string, number>
  /** True when every event was already committed and the append was acknowledged without writing. */
  readonly duplicate: boolean
}

export interface ReadStreamOptions {
  /** The first version to return; 1 by default. */
  readonly fromVersion?: number
  readonly limit?: number
}

export interface ReadAllOptions {
  /** Return events strictly after this position. */
  readonly after: LogPosition
  readonly limit: number
}

export class EventStore extends Context.Service<EventStore, {
  /** Appends to every stream or to none, each at its expected version. */
  readonly append: (appends: ReadonlyArray<StreamAppend>) => Effect.Effect<AppendResult, AppendError | ProjectionFailed>
  readonly readStream: (
    stream: string,
    options?: ReadStreamOptions
  ) => Effect.Effect<ReadonlyArray<RecordedEvent>, EventStoreUnavailable>
  /**
   * Reads the global log in its final order. Only events whose order can no longer change are returned, so a
   * reader that resumes after the last position it saw never skips nor repeats an event.
   */
  readonly readAll: (options: ReadAllOptions) => Effect.Effect<ReadonlyArray<RecordedEvent>, EventStoreUnavailable>
  /** A counter that moves on every append this process makes; see `awaitAppend`. */
  readonly appendCount: Effect.Effect<number>
  /** Waits until the counter moves past `seen`, or for `timeoutMillis`: the hint that new events may be readable. */
  readonly awaitAppend: (seen: number, timeoutMillis: number) => Effect.Effect<void>
  /** The position a named consumer has processed up to (`start` when it has none). */
  readonly loadCheckpoint: (name: string) => Effect.Effect<LogPosition, EventStoreUnavailable>
  /**
   * Runs `work` and moves the checkpoint from `from` to `to` in one transaction: the work's writes to the same
   * database and the checkpoint commit together, or neither does. Fails with CheckpointConflict when the
   * checkpoint is no longer at `from`.
   */
  readonly commitCheckpoint: <A, E, R>(
    name: string,
    from: LogPosition,
    to: LogPosition,
    work: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CheckpointConflict | EventStoreUnavailable, R>
  /** Runs `work` (emptying a read model) and removes the checkpoint in one transaction. */
  readonly resetCheckpoint: <A, E, R>(
    name: string,
    work: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | EventStoreUnavailable, R>
  /**
   * Rebuilds a registered inline projection from the whole log while appends wait, so the rebuilt read model
   * holds every event exactly once. Returns how many events were applied.
   */
  readonly rebuildInline: (name: string) => Effect.Effect<number, EventStoreUnavailable | ProjectionFailed>
  /** Succeeds when the store answers: the readiness probe. */
  readonly ping: Effect.Effect<void, EventStoreUnavailable>
  /** The names of the inline projections this store updates on append. */
  readonly inlineProjections: ReadonlyArray<string>
}>()("cairn/EventStore") {}
