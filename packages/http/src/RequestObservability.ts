/**
 * What every request leaves behind for operators, added around all routes: a request id (the caller's valid
 * `x-request-id`, or a new one) on every log line written while the request is handled and in the response's
 * `x-request-id`; its latency in the per-route histogram (HttpMetrics.ts); the id on its trace span when tracing is
 * on; and, with `ACCESS_LOG=true`, one access-log line (method, route, path, status, milliseconds). The work per
 * request is constant: a header check, a clock read at each end, a map lookup and a header on the response.
 */
import { Config, Context, Effect, Fiber, References, Tracer } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as HttpMetrics from "./HttpMetrics.ts"
import * as RequestId from "./RequestId.ts"

const pathOf = (url: string) => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

/** `ACCESS_LOG` (false): one log line per response. */
export const accessLog = Config.Boolean("ACCESS_LOG").pipe(Config.withDefault(false))

/**
 * Starts observing the request the fiber serves: its id in the fiber's log annotations and trace span, and, just
 * before its response is written, the latency metric, the `x-request-id` header and the access-log line. Synchronous:
 * a middleware calls it and goes on with the request (RequestEdge.ts, which Cairn's routes use).
 */
export const observe = (
  fiber: Fiber.Fiber<unknown, unknown>,
  request: HttpServerRequest.HttpServerRequest,
  accessLog: boolean
): void => {
  const requestId = RequestId.fromHeader(request.headers[RequestId.header])
  const started = performance.now()
  const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  if (span !== undefined && span._tag === "Span") span.attribute("http.request.id", requestId)
  // The annotation goes into the request's own context, which the server restores when the request ends (the
  // router sets the matched route the same way), so the lines of the handler and of every fiber it starts
  // carry it, with no wrapper to unwind per request.
  const annotations = Context.get(fiber.context, References.CurrentLogAnnotations)
  fiber.setContext(Context.add(fiber.context, References.CurrentLogAnnotations, { ...annotations, requestId }))
  // Runs for every response, a route's or one made from a failure, just before it is written; the router has
  // left the matched route in the context by then (none when no route matched).
  // It runs synchronously and, without the access log, answers with an `Exit`, so the server can still write
  // the response in the same step.
  HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_, response) => {
    const millis = performance.now() - started
    const context = Fiber.getCurrent()?.context ?? fiber.context
    const route = Context.getOrUndefined(context, HttpRouter.RouteContext)?.route.path
    HttpMetrics.record(context, request.method, route, response.status, millis / 1000)
    const tagged = HttpServerResponse.setHeader(response, RequestId.header, requestId)
    if (!accessLog) return Effect.succeed(tagged)
    return Effect.log("Sent HTTP response").pipe(
      Effect.annotateLogs({
        "http.method": request.method,
        "http.route": route ?? "unmatched",
        "http.path": pathOf(request.url),
        "http.status": response.status,
        "http.duration_ms": Math.round(millis * 10) / 10
      }),
      Effect.as(tagged)
    )
  })
}

/** Observability alone, as a global middleware (Cairn's routes have it through RequestEdge.ts). */
export const layer = HttpRouter.middleware(
  Effect.map(accessLog, (logged) => (httpEffect) =>
    Effect.withFiber((fiber) => {
      observe(fiber, Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest), logged)
      return httpEffect
    })),
  { global: true }
)
