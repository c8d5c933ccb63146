/**
 * What Cairn answers to a request no route takes: 404 `{error: "Not found"}` for a path it does not serve, and
 * 405 `{error: "Method not allowed"}` with an `Allow` header for a path it serves with other methods (HEAD wherever
 * GET is, as the router answers HEAD with the GET route). The methods of a path come from the route catalog, which
 * records every route registered (RouteCatalog.ts), never from a list kept by hand: at the first request no route
 * takes, the catalog's routes are put in a FindMyWay table built with the router's own config, so both match a URL
 * alike.
 */
import { Effect } from "effect"
import { FindMyWay, HttpRouter, HttpServerError, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { RouteCatalog, type Route } from "./RouteCatalog.ts"
import { json } from "./Respond.ts"

interface Served {
  readonly table: FindMyWay.Router<true>
  readonly methods: ReadonlySet<string>
}

/** The routes in a table to match URLs against, with the methods they name. */
const tableOf = (routes: ReadonlyArray<Route>, config: Partial<FindMyWay.RouterConfig>): Served => {
  const table = FindMyWay.make<true>(config)
  const methods = new Set<string>()
  for (const route of routes) {
    // The same registrations the router makes: `*` is every method, and `/a/*` also serves `/a`.
    const paths = route.path.endsWith("/*") ? [route.path, route.path.slice(0, -2) as FindMyWay.PathInput] : [route.path]
    for (const path of paths) {
      if (route.method === "*") table.all(path, true)
      else table.on(route.method, path, true)
    }
    if (route.method !== "*") methods.add(route.method)
  }
  return { table, methods }
}

/** The methods `url` is served with, in a stable order; empty when no route has its path. */
const allowedMethods = ({ methods, table }: Served, url: string) => {
  const allowed = [...methods].filter((method) => table.find(method, url) !== undefined)
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

/**
 * The fallback for the routes of the catalog: wraps the router's handler so RouteNotFound becomes the answer above
 * (RequestEdge.ts applies it to every request).
 */
export const make = Effect.gen(function*() {
  const catalog = yield* RouteCatalog
  const config = yield* HttpRouter.RouterConfig
  // Built at the first request no route takes, when every route layer has registered its routes.
  let served: Served | undefined
  // Only RouteNotFound is answered here; every other failure passes on unchanged (so its type does too).
  return <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.catchIf(effect, (error: E) => isRouteNotFound(error), (error) => {
      const { request } = error as HttpServerError.HttpServerError
      served ??= tableOf(catalog.routes, config)
      return Effect.succeed(answer(request, allowedMethods(served, request.url)))
    })
})
