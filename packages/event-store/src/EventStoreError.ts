/**
 * The failures callers of the EventStore port may handle. Adapters translate their driver errors into these, so a
 * database error never leaks past an adapter.
 */
import { Schema } from "effect"

/** The stream was not at the version the append expected; `actual` is its real version (0: no events). */
export class WrongExpectedVersion extends Schema.TaggedError<WrongExpectedVersion>()("WrongExpectedVersion", {
  stream: Schema.String,
  expected: Schema.String,
  actual: Schema.Number
}) {
  override get message() {
    return `Stream ${this.stream} is at version ${this.actual}, expected ${this.expected}`
  }
}

/**
 * A retried append overlaps what is committed only in part (some of its event ids exist, or exist in another
 * stream). Retrying an append whose events are all committed is acknowledged instead.
 */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  eventIds: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Append overlaps committed events only in part: ${this.eventIds.join(", ")}`
  }
}

/** The append itself is malformed (an event id that is not a UUID, a stream named twice, a bad version). */
export class InvalidAppend extends Schema.TaggedError<InvalidAppend>()("InvalidAppend", {
  reason: Schema.String
}) {
  override get message() {
    return `Invalid append: ${this.reason}`
  }
}

/** A checkpointed consumer lost a race: another consumer of the same name committed this batch first. */
export class CheckpointConflict extends Schema.TaggedError<CheckpointConflict>()("CheckpointConflict", {
  name: Schema.String
}) {
  override get message() {
    return `Checkpoint ${this.name} moved while a batch was processed`
  }
}

/** The store could not be reached or failed; `retryable` says whether trying again may help. */
export class EventStoreUnavailable extends Schema.TaggedError<EventStoreUnavailable>()("EventStoreUnavailable", {
  operation: Schema.String,
  retryable: Schema.Boolean,
  cause: Schema.Defect()
}) {
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return `Event store ${this.operation} failed`
  }
}

export type AppendError = WrongExpectedVersion | IdempotencyConflict | InvalidAppend | EventStoreUnavailable

/** A projection failed while applying events; inline, the append it belonged to did not happen. */
export class ProjectionFailed extends Schema.TaggedError<ProjectionFailed>()("ProjectionFailed", {
  projection: Schema.String,
  cause: Schema.Defect()
}) {
  override get message() {
    return `Projection ${this.projection} failed`
  }
}

/** No projection of that name is registered. */
export class UnknownProjection extends Schema.TaggedError<UnknownProjection>()("UnknownProjection", {
  projection: Schema.String
}) {
  override get message() {
    return `No projection named ${this.projection}`
  }
}
