/**
 * What every request goes through before and around its route, as one global middleware (one step per request
 * rather than one per concern; docs/performance.md, bench:http): observability (RequestObservability.ts: the
 * request id, latency metric, access log), the refusal of a target holding a NUL (RejectNul.ts), and the answers
 * to requests no route takes (RouteFallback.ts: 404, 405 with Allow). In that order, outermost first: a refused
 * or unrouted request still gets its id, metric and log line. A request target in absolute form
 * (`GET https://host/path`, RFC 9112 section 3.2.2, which a server must accept: what an HTTP client sends when Cairn
 * is its proxy, as the legacy `@pinata/sdk` is pointed at it) is routed by its path.
 */
import { Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import * as RejectNul from "./RejectNul.ts"
import * as RequestObservability from "./RequestObservability.ts"
import * as RouteFallback from "./RouteFallback.ts"

/** The scheme and authority of an absolute-form request target. */
const absoluteForm = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i

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
        if (RejectNul.hasNul(request.url)) return RejectNul.refusal()
        // Nearly every target starts with "/": only the others are matched.
        const origin = request.url.startsWith("/") ? null : absoluteForm.exec(request.url)
        if (origin === null) return routed
        const path = request.url.slice(origin[0].length)
        const url = path.startsWith("/") ? path : `/${path}`
        return Effect.provideService(routed, HttpServerRequest.HttpServerRequest, request.modify({ url }))
      })
    }
  }),
  { global: true }
)
