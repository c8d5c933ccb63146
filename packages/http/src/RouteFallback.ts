/**
 * What Cairn answers to a request no route takes: 404 `{error: "Not found"}` for a path it does not serve, and
 * 405 `{error: "Method not allowed"}` with an `Allow` header for a path it serves with other methods (HEAD wherever
 * GET is, as the router answers HEAD with the GET route). The methods of a path come from the routes themselves,
 * never from a list kept by hand: this layer stands in for the HttpRouter that the route layers register with,
 * records each route in a second FindMyWay table (built with the router's own config, so both match a URL alike)
 * and hands the route on to the real router. Routes added through `prefixed` are not recorded (none are).
 */
import { Effect, Layer } from "effect"
import { FindMyWay, HttpRouter, HttpServerError, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { json } from "./Respond.ts"

/** The methods `url` is served with, in a stable order; empty when no route has its path. */
const allowedMethods = (served: FindMyWay.Router<true>, methods: ReadonlySet<string>, url: string) => {
  const allowed = [...methods].filter((method) => served.find(method, url) !== undefined)
  if (allowed.includes("GET") && !allowed.includes("HEAD")) allowed.push("HEAD")
  return allowed.sort()
}

const isRouteNotFound = (error: unknown): error is HttpServerError.HttpServerError =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/** The answer to a request no route took. */
export const answer = (request: HttpServerRequest.HttpServerRequest, allowed: ReadonlyArray<string>) =>
  allowed.length === 0 || allowed.includes(request.method)
    ? json({ error: "Not found" }, 404)
    : json({ error: "Method not allowed" }, 405, { allow: allowed.join(", ") })

export const layer = Layer.effect(
  HttpRouter.HttpRouter,
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const served = FindMyWay.make<true>(yield* HttpRouter.RouterConfig)
    const methods = new Set<string>()

    const record = (route: { readonly method: string; readonly path: FindMyWay.PathInput }) => {
      // The same registrations the router makes: `*` is every method, and `/a/*` also serves `/a`.
      const paths = route.path.endsWith("/*") ? [route.path, route.path.slice(0, -2) as FindMyWay.PathInput] : [route.path]
      for (const path of paths) {
        if (route.method === "*") served.all(path, true)
        else served.on(route.method, path, true)
      }
      if (route.method !== "*") methods.add(route.method)
    }

    // Only RouteNotFound is answered here; every other failure passes on unchanged (so its type does too).
    const fallback = <E>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E>) =>
      Effect.catchIf(effect, (error: E) => isRouteNotFound(error), (error) => {
        const { request } = error as HttpServerError.HttpServerError
        return Effect.succeed(answer(request, allowedMethods(served, methods, request.url)))
      })
    yield* router.addGlobalMiddleware(fallback)

    return HttpRouter.HttpRouter.of({
      ...router,
      add: (method, path, handler, options) => {
        record({ method, path })
        return router.add(method, path, handler, options)
      },
      addAll: (routes) => {
        for (const route of routes) record(route)
        return router.addAll(routes)
      }
    })
  })
)
