/**
 * Liveness and readiness for load balancers and orchestrators. `/healthz` answers while the process serves;
 * `/readyz` also asks the event store, so it fails while the database is unreachable. Both are open: they say
 * nothing about tenants.
 */
import { EventStore } from "@cairn/event-store"
import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as RouteCatalog from "./RouteCatalog.ts"

const Live = Schema.Struct({ status: Schema.Literal("ok") })
const Ready = Schema.Struct({ status: Schema.Literal("ready") })
const Unavailable = Schema.Struct({ status: Schema.Literal("unavailable"), reason: Schema.String })

const live = HttpServerResponse.jsonUnsafe({ status: "ok" })
const ready = HttpServerResponse.jsonUnsafe({ status: "ready" })
const unavailable = HttpServerResponse.jsonUnsafe({ status: "unavailable", reason: "event store unreachable" }, { status: 503 })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/healthz",
      summary: "Liveness",
      description: "Answers while the process serves; asks nothing of the store.",
      auth: "none",
      response: { schema: Live }
    }, Effect.succeed(live))
    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/readyz",
      summary: "Readiness",
      description: "`{status: \"ready\"}` once migrations are done and the event store answers (within 2 s); " +
        "503 `{status: \"unavailable\", reason}` while it does not.",
      auth: "none",
      response: { schema: Ready },
      otherResponses: [{ status: 503, schema: Unavailable, description: "The event store is unreachable" }]
    }, store.ping.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(ready),
        Effect.catch((error) => Effect.logWarning("Readiness check failed", error).pipe(Effect.as(unavailable)))
      )
    )
  })
)
