/**
 * Every read model Cairn keeps, in one list: inline ones are updated inside each append's transaction, the
 * asynchronous ones by background runners. The server runs them; the CLI checks them against the log, or rebuilds
 * them in place, by name.
 */
import { ReadModels as Tables } from "@cairn/application"
import { EventStore, type Projection, Subscription, UnknownProjection } from "@cairn/event-store"
import { CategoryStats, ProjectionCheck } from "@cairn/event-store-pg"
import { Effect, Layer, Schedule } from "effect"
import type { SqlClient } from "effect/sql"

export const inline: ReadonlyArray<Projection<SqlClient.SqlClient>> = Tables.all

export const asynchronous: ReadonlyArray<Projection<SqlClient.SqlClient>> = [CategoryStats.projection]

export const names = (): ReadonlyArray<string> => [...inline, ...asynchronous].map((p) => p.name)

/** Keeps every asynchronous read model current; a runner that fails is logged and restarted with backoff. */
export const layerRunners: Layer.Layer<never, never, EventStore | SqlClient.SqlClient> = Layer.effectDiscard(
  Effect.forEach(asynchronous, (projection) =>
    Subscription.runProjection(projection).pipe(
      Effect.tapError((error) => Effect.logError(`Projection ${projection.name} failed; restarting`, error)),
      Effect.retry(Schedule.min([Schedule.exponential("200 millis"), Schedule.spaced("30 seconds")])),
      Effect.forkScoped
    ), { discard: true })
)

export interface Replayed {
  readonly projection: string
  readonly events: number
}

/** Rebuilds one read model (or all of them) from the whole log. */
export const replay = (name?: string) =>
  Effect.gen(function*() {
    const chosen = name === undefined ? names() : [name]
    const replayed: Array<Replayed> = []
    for (const projection of chosen) {
      const asyncProjection = asynchronous.find((p) => p.name === projection)
      if (asyncProjection !== undefined) {
        replayed.push({ projection, events: yield* Subscription.rebuildProjection(asyncProjection) })
      } else if (inline.some((p) => p.name === projection)) {
        replayed.push({ projection, events: yield* (yield* EventStore).rebuildInline(projection) })
      } else {
        return yield* new UnknownProjection({ projection })
      }
    }
    return replayed
  })

/**
 * Rebuilds one read model (or all) from the whole log into a fresh schema and compares it with the live tables,
 * changing nothing (ProjectionCheck).
 */
export const check = (name?: string) =>
  Effect.gen(function*() {
    if (name !== undefined && !names().includes(name)) return yield* new UnknownProjection({ projection: name })
    const wanted = (p: Projection<SqlClient.SqlClient>) => name === undefined || p.name === name
    return yield* ProjectionCheck.check({ inline: inline.filter(wanted), asynchronous: asynchronous.filter(wanted) })
  })
