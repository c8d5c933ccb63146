/**
 * The route catalog: a route is registered through `add` with its entry (method, path, summary, who may call it,
 * the Schemas it decodes its body and query with and encodes its answer with, and the documented errors it may
 * answer), so no route is served without one. The entries of one set of routes are collected in the
 * `RouteCatalog` service while the router is built; OpenApi.ts turns them into the OpenAPI document.
 */
import type { DocumentedError } from "@cairn/domain"
import { Context, Effect, Layer, Schema } from "effect"
import type { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** A documented failure, as the domain's typed errors carry it: its status and its exact string. */
export type ErrorDoc = Pick<DocumentedError, "_tag" | "status" | "message">

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/**
 * Who may call a route: an API key (with `scope`), an API key or the agent's current gateway token (an agent's own
 * `/v0` routes), the admin token, or anyone.
 */
export type Auth = "apiKey" | "apiKeyOrGateway" | "admin" | "none"

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
  /** Extra headers the route reads (the resumable upload protocol's). */
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly required?: boolean; readonly description?: string }>
}

/** The entries registered while one router was built. */
export class RouteCatalog extends Context.Service<RouteCatalog, { readonly entries: Array<Entry> }>()("cairn/RouteCatalog") {
  static readonly layer = Layer.sync(RouteCatalog, () => ({ entries: [] }))
}

/** Registers `handler` at the entry's method and path, and the entry in the catalog. */
export const add = <E, R>(
  router: HttpRouter.HttpRouter,
  entry: Entry,
  handler:
    | Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    | ((request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>)
) =>
  Effect.gen(function*() {
    const catalog = yield* RouteCatalog
    catalog.entries.push(entry)
    return yield* router.add(entry.method, entry.path, handler)
  })

/**
 * Whether an answer with a field its response Schema does not describe is refused (a 500, as any answer that does
 * not fit) instead of the field being dropped. Off in production, where dropping keeps anything undocumented from
 * leaving; on in the test runtime, so a Schema that misses a field the route sends fails that route's tests.
 */
export const StrictResponses = Context.Reference<boolean>("cairn/StrictResponses", { defaultValue: () => false })

/** Encodes a route's answer with its response Schema; an answer that does not fit is a bug (500), not bad input. */
export const encode = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"], strict = false) =>
  Effect.orDie(Schema.encodeUnknownEffect(schema)(value, strict ? { onExcessProperty: "error" } : undefined))
