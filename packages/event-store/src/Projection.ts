/**
 * A projection keeps a read model in step with the log. Inline projections run inside the append's transaction,
 * so a read right after a write sees it; asynchronous ones run in a checkpointed consumer (Subscription.ts).
 * `R` is what the read model needs from the store's transaction: `SqlClient` for Postgres, nothing in memory.
 */
import type { Effect } from "effect"
import type { RecordedEvent } from "./RecordedEvent.ts"

export interface Projection<R = never> {
  readonly name: string
  /** Applies events, in log order, to the read model. Events it does not care about are ignored. */
  readonly apply: (events: ReadonlyArray<RecordedEvent>) => Effect.Effect<void, unknown, R>
  /** Empties the read model, before a rebuild from the start of the log. */
  readonly reset: Effect.Effect<void, unknown, R>
  /** Creates the read model's storage if it is missing; run before the projection is first used. */
  readonly setup?: Effect.Effect<void, unknown, R>
}
