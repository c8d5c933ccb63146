/**
 * What every request goes through before and around its route, as one global middleware (one step per request
 * rather than one per concern; docs/performance.md, bench:http): observability (RequestObservability.ts: the
 * request id, latency metric, access log), the refusal of a target holding a NUL (RejectNul.ts), and the answers
 * to requests no route takes (RouteFallback.ts: 404, 405 with Allow). In that order, outermost first: a refused
 * or unrouted request still gets its id, metric and log line.
 */
import { Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import * as RejectNul from "./RejectNul.ts"
import * as RequestObservability from "./RequestObservability.ts"
import * as RouteFallback from "./RouteFallback.ts"

/** Needs the route catalog the routes are registered in (RouteCatalog.layer), for the fallback. */
export const layer = HttpRouter.middleware(
  Effect.gen(function*() {
    const accessLog = yield* RequestObservability.accessLog
    const fallback = yield* RouteFallback.make
    return (httpEffect) => {
      const routed = fallback(httpEffect)
      return Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        RequestObservability.observe(fiber, request, accessLog)
        return RejectNul.hasNul(request.url) ? RejectNul.refusal() : routed
      })
    }
  }),
  { global: true }
)
