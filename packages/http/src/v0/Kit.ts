/**
 * The `/v0` route kit: what every agents-API route shares, so a resource's routes module only says what its routes
 * do. A route is authenticated (an API key with the `org:agents` scope; on an agent's own routes,
 * `/v0/agents/{agentId}/…`, also that agent's current gateway token, which may come as `?token=` or the `gw_token`
 * cookie, as on Pinata's per-agent host), gets the decoded path parameters, and answers JSON: the handler's value
 * with 200, or `created(body)` for 201, or a response it built (a file's bytes). Any failure becomes `{error}` with
 * its documented status (ErrorResponse.ts).
 */
import { Agents, ApiKeys, type Principal, Unauthorized } from "@cairn/application"
import { type Effect as E, Effect, Option, type Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { bearerToken, requireScope } from "../Authenticate.ts"
import * as Body from "../Body.ts"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"

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

type Method = "GET" | "POST" | "PUT" | "DELETE"
type Handler<C> = (context: C) => E.Effect<unknown, unknown>

const gatewayTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  query(request, "token") ??
    /(?:^|;\s*)gw_token=([^;]+)/.exec(request.headers["cookie"] ?? "")?.[1] ??
    undefined

/** The route adders for one router; a routes module calls this once and adds its routes with them. */
export const make = (router: HttpRouter.HttpRouter) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const agents = yield* Agents

    /** The caller: an API key with the agents scope, or on an agent's own routes its current gateway token. */
    const authorize = (request: HttpServerRequest.HttpServerRequest, agentId: string | undefined) =>
      Effect.gen(function*() {
        const token = bearerToken(request) ?? (agentId === undefined ? undefined : gatewayTokenOf(request))
        if (token === undefined) return yield* new Unauthorized({ reason: "no bearer token" })
        if (agentId !== undefined && token.startsWith("gw_")) {
          const principal = yield* agents.gatewayPrincipal(agentId, token)
          if (Option.isNone(principal)) return yield* new Unauthorized({ reason: "not this agent's current gateway token" })
          return principal.value
        }
        return yield* requireScope(keys, request, scope)
      })

    const add = <C>(method: Method, path: `/v0/${string}`, handle: Handler<C>, agentScoped: boolean) =>
      router.add(method, path, (request) =>
        handled(Effect.gen(function*() {
          const params = yield* HttpRouter.params
          const agentId = agentScoped ? params["agentId"] ?? "" : undefined
          const principal = yield* authorize(request, agentId)
          const context: RouteContext = { principal, request, params, body: (schema) => Body.json(request, schema) }
          const result = yield* handle((agentId === undefined ? context : { ...context, agentId }) as C)
          // A handler that answers something else than JSON (a file's bytes) builds its response itself.
          if (HttpServerResponse.isHttpServerResponse(result)) return result
          return result instanceof Reply ? json(result.body, result.status) : json(result)
        })))

    return {
      /** A workspace route (`/v0/secrets`, `/v0/agents`): API keys only. */
      route: (method: Method, path: `/v0/${string}`, handle: Handler<RouteContext>) => add(method, path, handle, false),
      /** An agent's route: its path has `:agentId`, and the agent's gateway token is accepted too. */
      agentRoute: (method: Method, path: `/v0/agents/:agentId${string}`, handle: Handler<AgentRouteContext>) => add(method, path, handle, true)
    }
  })
