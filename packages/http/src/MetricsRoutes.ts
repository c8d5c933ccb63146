/**
 * `GET /metrics`: every metric of the process in the Prometheus text format (Effect's `Metric` registry, formatted by
 * `effect/observability` PrometheusMetrics). Open by default, like `/healthz`, for a Prometheus on the internal
 * network; with `METRICS_TOKEN` set it answers only `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). Gauges
 * that are read rather than counted (agents by state, projection lag) are refreshed by `BeforeScrape` just before
 * each scrape, so they cost nothing between scrapes.
 */
import { Unauthorized } from "@cairn/application"
import { Config, Context, Effect, Option, Redacted } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { bearerToken } from "./Authenticate.ts"
import { fromError } from "./ErrorResponse.ts"
import * as RouteCatalog from "./RouteCatalog.ts"

/** Work done before each scrape: reading gauges from the database. The process's runtime sets it; none by default. */
export const BeforeScrape = Context.Reference<Effect.Effect<void>>("cairn/Metrics/BeforeScrape", {
  defaultValue: () => Effect.void
})

const contentType = "text/plain; version=0.0.4; charset=utf-8"

/** Not one of the API's own reasons: the client is told only that its credentials were refused. */
const wrongToken = "wrong-metrics-token" as string as Unauthorized["reason"]

const digest = async (text: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))

/** Compares digests, so neither the token's length nor its first differing byte shows in the time taken. */
const sameSecret = (candidate: string, expected: Uint8Array) =>
  Effect.promise(async () => {
    const given = await digest(candidate)
    let difference = 0
    for (let i = 0; i < expected.length; i++) difference |= given[i]! ^ expected[i]!
    return difference === 0
  })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const token = yield* Config.option(Config.Redacted("METRICS_TOKEN"))
    const expected = Option.isSome(token) ? yield* Effect.promise(() => digest(Redacted.value(token.value))) : undefined
    const scrape = (request: Parameters<typeof bearerToken>[0]) => Effect.gen(function*() {
      if (expected !== undefined) {
        const candidate = bearerToken(request)
        if (candidate === undefined) return yield* fromError(new Unauthorized({ reason: "missing-credentials" }))
        if (!(yield* sameSecret(candidate, expected))) return yield* fromError(new Unauthorized({ reason: wrongToken }))
      }
      yield* (yield* BeforeScrape).pipe(
        Effect.catchCause((cause) => Effect.logWarning("Some metrics could not be refreshed before a scrape", cause))
      )
      return HttpServerResponse.text(yield* PrometheusMetrics.format(), { contentType })
    })
    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/metrics",
      summary: "Prometheus metrics",
      description: "The process's metrics in the Prometheus text format (docs/operations.md, \"Observability\"). Open unless " +
        "`METRICS_TOKEN` is set; then it needs `Authorization: Bearer <METRICS_TOKEN>`.",
      auth: "none",
      response: { contentType: "text/plain; version=0.0.4", description: "Prometheus text exposition format" },
      errors: [new Unauthorized({ reason: "missing-credentials" })]
    }, scrape)
  })
)
