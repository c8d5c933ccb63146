/**
 * The route catalog: the one record of every route a set of route layers registers. `layer` stands in for the
 * HttpRouter those layers register with and records each route (its method and path) before handing it on to the
 * real router, so nothing is served without being in the catalog. A documented route is registered through `add`
 * with its entry (summary, who may call it, the Schemas it decodes its body and query with and encodes its answer
 * with, and the documented errors it may answer), which the catalog keeps beside the route: OpenApi.ts turns the
 * entries into the OpenAPI document, and RouteFallback.ts answers 404 and 405 from the methods and paths.
 * Routes added through `prefixed` are not recorded (none are).
 */
import type { DocumentedError } from "@cairn/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { type FindMyWay, HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"

/** A documented failure, as the domain's typed errors carry it: its status and its exact string. */
export type ErrorDoc = Pick<DocumentedError, "_tag" | "status" | "message">

/** A failure body of another API's shape: its JSON Schema (named in the document) and a failure as it is written. */
export interface FailureBody {
  readonly name: string
  readonly jsonSchema: object
  readonly example: (error: ErrorDoc) => unknown
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/**
 * Who may call a route: an API key (with `scope`), an API key or the agent's current gateway token (an agent's own
 * `/v0` routes), the admin token, or anyone.
 */
export type Auth = "apiKey" | "apiKeyOrGateway" | "platform" | "admin" | "none"

export interface RequestBody {
  /** The Schema the route decodes the body with (its JSON form is documented); absent for raw bodies. */
  readonly schema?: Schema.Top
  /** `application/json` unless said otherwise (`multipart/form-data`, `application/octet-stream`, …). */
  readonly contentType?: string
  /** Whether the body may be left out (a restart without a version). */
  readonly optional?: boolean
  readonly description?: string
}

export interface ResponseBody {
  /** 200 unless said otherwise. */
  readonly status?: number
  /** The Schema the route encodes its JSON answer with; absent where the answer is not described yet. */
  readonly schema?: Schema.Top
  /** `application/json` unless said otherwise (a file's bytes). */
  readonly contentType?: string
  readonly description?: string
  /** The answer has no body (a 204 never has one; a 202 may not either: the Pinning Service API's remove). */
  readonly empty?: boolean
}

export interface Entry {
  readonly method: Method
  /** The router's path, parameters as `:name`. */
  readonly path: `/${string}`
  readonly summary: string
  readonly description?: string
  readonly auth: Auth
  /** The API-key scope the route needs. */
  readonly scope?: string
  readonly body?: RequestBody
  /** A Struct whose fields are the query parameters (each a string on the wire). */
  readonly query?: Schema.Top
  readonly response?: ResponseBody
  /** Other successes the route may answer (a resumable upload's 201 beside a multipart upload's 200). */
  readonly otherResponses?: ReadonlyArray<ResponseBody>
  /** Every failure the route documents beyond the ones its auth and input imply (OpenApi.ts adds those). */
  readonly errors?: ReadonlyArray<ErrorDoc>
  /** The shape its failures take when it is not Cairn's `{error}` (the Pinning Service API's Failure). */
  readonly failure?: FailureBody
  /** Extra headers the route reads (the resumable upload protocol's). */
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly required?: boolean; readonly description?: string }>
}

/** One route as registered: `*` is every method; `entry` is there for a documented route. */
export interface Route {
  readonly method: string
  readonly path: FindMyWay.PathInput
  readonly entry: Entry | undefined
}

/** Every route registered while one router was built, in the order they were registered. */
export class RouteCatalog extends Context.Service<RouteCatalog, { readonly routes: ReadonlyArray<Route> }>()("cairn/RouteCatalog") {}

/** The documented routes' entries. */
export const entries = (catalog: RouteCatalog["Service"]): Array<Entry> =>
  catalog.routes.flatMap((route) => route.entry === undefined ? [] : [route.entry])

/** The entry of the route being registered through `add`, for the recording router to keep with the route. */
const Registering = Context.Reference<Entry | undefined>("cairn/RouteCatalog/Registering", { defaultValue: () => undefined })

/**
 * The catalog, and an HttpRouter over the real one that records every route registered through it. Provide both to
 * the route layers (and to whatever reads the catalog), so they share one record.
 */
export const layer = Layer.effectContext(Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  const routes: Array<Route> = []
  const recording = HttpRouter.HttpRouter.of({
    ...router,
    add: (method, path, handler, options) =>
      Effect.gen(function*() {
        routes.push({ method, path, entry: yield* Registering })
        return yield* router.add(method, path, handler, options)
      }),
    addAll: (added) => {
      for (const route of added) routes.push({ method: route.method, path: route.path, entry: undefined })
      return router.addAll(added)
    }
  })
  return Context.make(RouteCatalog, RouteCatalog.of({ routes })).pipe(Context.add(HttpRouter.HttpRouter, recording))
}))

/**
 * Registers `handler` at the entry's method and path, with the entry kept in the catalog beside the route.
 * `servedAt` registers it at another router path that serves the documented one too (the gateway's
 * `/ipfs/:cid/*`, which serves `/ipfs/:cid` and every path under it, documented as `/ipfs/{cid}`).
 */
export const add = <E, R>(
  router: HttpRouter.HttpRouter,
  entry: Entry,
  handler:
    | Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    | ((request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>),
  options?: { readonly servedAt?: FindMyWay.PathInput }
) =>
  // Asks for the catalog, so a route layer that documents its routes cannot be built without one.
  Effect.gen(function*() {
    yield* RouteCatalog
    return yield* router.add(entry.method, options?.servedAt ?? entry.path, handler)
  }).pipe(Effect.provideService(Registering, entry))

/**
 * Whether an answer with a field its response Schema does not describe is refused (a 500, as any answer that does
 * not fit) instead of the field being dropped. Off in production, where dropping keeps anything undocumented from
 * leaving; on in the test runtime, so a Schema that misses a field the route sends fails that route's tests.
 */
export const StrictResponses = Context.Reference<boolean>("cairn/StrictResponses", { defaultValue: () => false })

/** Encodes a route's answer with its response Schema; an answer that does not fit is a bug (500), not bad input. */
export const encode = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"], strict = false) =>
  Effect.orDie(Schema.encodeUnknownEffect(schema)(value, strict ? { onExcessProperty: "error" } : undefined))
