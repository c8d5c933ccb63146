/**
 * Liveness and readiness for load balancers and orchestrators. `/healthz` answers while the process serves;
 * `/readyz` also asks the event store, so it fails while the database is unreachable. Both are open: they say
 * nothing about tenants.
 */
import { EventStore } from "@cairn/event-store"
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"

const live = HttpServerResponse.jsonUnsafe({ status: "ok" })
const ready = HttpServerResponse.jsonUnsafe({ status: "ready" })
const unavailable = HttpServerResponse.jsonUnsafe({ status: "unavailable", reason: "event store unreachable" }, { status: 503 })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    yield* router.add("GET", "/healthz", Effect.succeed(live))
    yield* router.add(
      "GET",
      "/readyz",
      store.ping.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(ready),
        Effect.catch((error) => Effect.logWarning("Readiness check failed", error).pipe(Effect.as(unavailable)))
      )
    )
  })
)
