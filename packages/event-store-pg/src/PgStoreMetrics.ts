/**
 * The event store's metrics, in Effect's `Metric` registry (served on `/metrics`): how long appends take
 * (`cairn_event_store_append_duration_seconds`, by outcome), and how far each asynchronous projection is behind the
 * head of the log (`cairn_projection_lag_events`, counted from its checkpoint when `refreshProjectionLag` runs, just
 * before a scrape).
 */
import { Effect, Metric } from "effect"
import { SqlClient } from "effect/sql"

const appendDescription = "Time an append to the event store takes, from the call to its acknowledgement, by outcome"
const appendBoundaries = Metric.boundariesFromIterable([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5])

export const appendDuration = {
  ok: Metric.histogram("cairn_event_store_append_duration_seconds", { description: appendDescription, boundaries: appendBoundaries, attributes: { outcome: "ok" } }),
  error: Metric.histogram("cairn_event_store_append_duration_seconds", { description: appendDescription, boundaries: appendBoundaries, attributes: { outcome: "error" } })
}

/** `append`, timed into `appendDuration` (the histogram updated in the exit hook itself: this runs per append). */
export const timed = <Args extends ReadonlyArray<unknown>, A, E, R>(append: (...args: Args) => Effect.Effect<A, E, R>) =>
(...args: Args): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const started = performance.now()
    return Effect.onExit(append(...args), (exit) => {
      const histogram = exit._tag === "Success" ? appendDuration.ok : appendDuration.error
      histogram.updateUnsafe((performance.now() - started) / 1000, fiber.context)
      return Effect.void
    })
  })

const lagDescription = "Events in the log after the projection's checkpoint: how far it is behind the head of the log"
const lagGauges = new Map<string, Metric.Gauge<number>>()
const lagGauge = (projection: string) => {
  let gauge = lagGauges.get(projection)
  if (gauge === undefined) {
    gauge = Metric.gauge("cairn_projection_lag_events", { description: lagDescription, attributes: { projection } })
    lagGauges.set(projection, gauge)
  }
  return gauge
}

/** Counts, for each named projection, the events after its checkpoint (the whole log before its first one). */
export const refreshProjectionLag = (projections: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const projection of projections) {
      const [row] = yield* sql<{ readonly lag: string | number }>`
        WITH checkpoint AS (
          SELECT COALESCE((SELECT transaction_id FROM cairn_checkpoints WHERE name = ${projection}), '0'::xid8) AS transaction_id,
                 COALESCE((SELECT global_position FROM cairn_checkpoints WHERE name = ${projection}), 0) AS global_position
        )
        SELECT count(*)::int8 AS lag FROM cairn_events e, checkpoint c
        WHERE (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position)`
      yield* Metric.update(lagGauge(projection), Number(row?.lag ?? 0))
    }
  })
