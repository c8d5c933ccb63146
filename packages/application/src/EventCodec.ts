/**
 * Between domain events (schema classes) and the store's JSON events: encode on append, decode and fold on load.
 * A stored event that no longer decodes is a corrupt log, a defect, never a client error.
 */
import type { EventMetadata, EventStore, NewEvent } from "@cairn/event-store"
import { Clock, Effect, Schema } from "effect"

export const encoder = <S extends Schema.Codec<{ readonly _tag: string }, unknown>>(schema: S) => {
  const encode = Schema.encodeSync(schema)
  return (event: S["Type"], metadata?: EventMetadata): NewEvent => ({
    type: event._tag,
    data: encode(event),
    ...(metadata === undefined ? {} : { metadata })
  })
}

/** The stream's events folded into its state, with the version to expect when appending after them. */
export const load = <S extends Schema.Codec<unknown, unknown>, State>(
  store: EventStore["Service"],
  stream: string,
  schema: S,
  initial: State,
  evolve: (state: State, event: S["Type"]) => State
) =>
  Effect.gen(function*() {
    const stored = yield* store.readStream(stream)
    const events = yield* Effect.orDie(Schema.decodeUnknownEffect(Schema.Array(schema))(stored.map((e) => e.data)))
    return { state: events.reduce(evolve, initial), version: stored.length }
  })

/** The time events record: now, as ISO-8601 with milliseconds (what clients see as `created_at`). */
export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
