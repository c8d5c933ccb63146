/**
 * The `/v0` route kit: what every agents-API route shares, so a resource's routes module only says what its routes
 * do. A route is authenticated (an API key with the `org:agents` scope; on an agent's own routes,
 * `/v0/agents/{agentId}/…`, also that agent's current gateway token, which may come as `?token=` or the `gw_token`
 * cookie, as on Pinata's per-agent host, and a platform token minted for that agent), gets the decoded path parameters, and answers JSON: the handler's value
 * with 200, or `created(body)` for 201, or a response it built (a file's bytes). Any failure becomes `{error}` with
 * its documented status (ErrorResponse.ts). Each route is added with its catalog entry (RouteCatalog.ts): what it
 * decodes, the Schema its answer is encoded with (when it has one), and the errors it documents.
 */
import { Agents, ApiKeys, type Principal, Unauthorized } from "@cairn/application"
import { PlatformToken } from "@cairn/auth"
import { type Effect as E, Effect, Option, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { bearerToken, missingCredentials, requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"

const scope = "org:agents"

/** A success with another status than 200. */
export class Reply {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    this.status = status
    this.body = body
  }
}

export const created = (body: unknown) => new Reply(201, body)

/** The answer of a route that only says it is done. */
export const Done = Schema.Struct({ success: Schema.Boolean, message: Schema.String })

/** A query parameter's raw value; null when absent. */
export const query = (request: HttpServerRequest.HttpServerRequest, name: string) =>
  new URL(request.url, "http://cairn").searchParams.get(name)

export interface RouteContext {
  readonly principal: Principal
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params: Readonly<Record<string, string | undefined>>
  /** The JSON body, decoded with `schema` (400 `Validation failed: …` otherwise). */
  readonly body: <S extends Schema.Codec<unknown, unknown>>(schema: S) => E.Effect<S["Type"], unknown>
}

export interface AgentRouteContext extends RouteContext {
  readonly agentId: string
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
type Handler<C> = (context: C) => E.Effect<unknown, unknown>

/** A route's catalog entry; the kit adds the method, path and auth it registers the route with. */
export type Doc = Omit<RouteCatalog.Entry, "method" | "path" | "auth" | "scope">

const gatewayTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  query(request, "token") ??
    /(?:^|;\s*)gw_token=([^;]+)/.exec(request.headers["cookie"] ?? "")?.[1] ??
    undefined

/** The route adders for one router; a routes module calls this once and adds its routes with them. */
export const make = (router: HttpRouter.HttpRouter) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const agents = yield* Agents
    const strict = yield* RouteCatalog.StrictResponses

    /** The caller: an API key with the agents scope, or on an agent's own routes its current gateway token. */
    const authorize = (request: HttpServerRequest.HttpServerRequest, agentId: string | undefined) =>
      Effect.gen(function*() {
        const token = bearerToken(request) ?? (agentId === undefined ? undefined : gatewayTokenOf(request))
        if (token === undefined) return yield* missingCredentials(request)
        if (agentId !== undefined && token.startsWith("gw_")) {
          const principal = yield* agents.gatewayPrincipal(agentId, token)
          if (Option.isNone(principal)) return yield* new Unauthorized({ reason: "stale-gateway-token" })
          return principal.value
        }
        // A platform token is good on its own agent's routes only; anywhere else it is checked as an API key, and fails.
        if (agentId !== undefined && PlatformToken.claimsPlatform(token)) return yield* agents.platformPrincipal(agentId, token)
        return yield* requireScope(keys, request, scope)
      })

    const add = <C>(method: Method, path: `/v0/${string}`, doc: Doc, handle: Handler<C>, agentScoped: boolean) => {
      const entry: RouteCatalog.Entry = { ...doc, method, path, auth: agentScoped ? "apiKeyOrGateway" : "apiKey", scope }
      const schema = doc.response?.schema as Schema.Codec<unknown, unknown> | undefined
      return RouteCatalog.add(router, entry, (request) =>
        handled(Effect.gen(function*() {
          const params = yield* HttpRouter.params
          const agentId = agentScoped ? params["agentId"] ?? "" : undefined
          const principal = yield* authorize(request, agentId)
          const context: RouteContext = { principal, request, params, body: (schema) => Body.json(request, schema) }
          const result = yield* handle((agentId === undefined ? context : { ...context, agentId }) as C)
          // A handler that answers something else than JSON (a file's bytes) builds its response itself.
          if (HttpServerResponse.isHttpServerResponse(result)) return result
          const [status, body] = result instanceof Reply ? [result.status, result.body] : [200, result]
          return json(schema === undefined ? body : yield* RouteCatalog.encode(schema, body, strict), status)
        })))
    }

    return {
      /** A workspace route (`/v0/secrets`, `/v0/agents`): API keys only. */
      route: (method: Method, path: `/v0/${string}`, doc: Doc, handle: Handler<RouteContext>) => add(method, path, doc, handle, false),
      /** An agent's route: its path has `:agentId`, and the agent's gateway token is accepted too. */
      agentRoute: (method: Method, path: `/v0/agents/:agentId${string}`, doc: Doc, handle: Handler<AgentRouteContext>) =>
        add(method, path, doc, handle, true)
    }
  })
