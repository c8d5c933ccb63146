/** The time events record: now, as ISO-8601 with milliseconds (what clients see as `createdAt`). */
import { Clock, Effect } from "effect"

export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
