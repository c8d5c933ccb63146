/**
 * Agents' apps on their domains, and each agent's own host, wired into Cairn's Node server: the app proxy
 * (@cairn/app-proxy) asks the Domains service for a host's active route, Agents whether a presented gateway token is
 * the agent's current one, and the AgentEngine where the agent's app is reached from this node. Hosts under
 * `APPS_DOMAIN` belong to apps alone (one with no active domain is 404, never Cairn's API); every other host without
 * an active domain is Cairn's. See docs/operations.md, "Routing agents' apps".
 *
 * `<agentId>.<AGENTS_DOMAIN>` is the agent's own host (decision 0046): its gateway, for the agent's gateway token or
 * an API key of the agent's workspace with `org:agents`; the gateway itself gets the gateway token.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { AppProxy } from "@cairn/app-proxy"
import { Agents, ApiKeys, Domains, Gateway, ReadModels, Unauthorized } from "@cairn/application"
import { GatewayTokens } from "@cairn/auth"
import { Agent } from "@cairn/domain"
import { Authenticate } from "@cairn/http"
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type * as Http from "node:http"

/** What the proxy needs of the Domains service: its routes, and the domain apps' subdomains are made under. */
export interface DomainRoutes {
  readonly appsDomain: string
  readonly routeFor: (host: string) => Effect.Effect<
    Option.Option<{ readonly agentId: string; readonly targetPort: number; readonly protected: boolean; readonly gateway?: boolean }>,
    unknown
  >
  /** The agent whose own host a host is (`<agentId>.<AGENTS_DOMAIN>`), by its name; none without it. */
  readonly agentOfHost?: (host: string) => string | undefined
}

/** A 401 as Cairn's API answers it: `{error: "Unauthorized", reason}` and RFC 6750's challenge. */
const unauthorized = (reason: string): { readonly admitted: false } & AppProxy.Refusal => {
  const error = new Unauthorized({ reason })
  return {
    admitted: false,
    status: 401,
    body: { error: error.message, ...error.details },
    headers: { "www-authenticate": Authenticate.challenge(error) }
  }
}

/** Puts the app proxy in front of `server`'s own listeners, with the Domains service's routes, until the scope closes. */
export const attach = (server: Http.Server) =>
  Effect.gen(function*() {
    yield* attachWith(server, yield* Domains)
  })

/** `attach` with routes of the caller's choosing. */
export const attachWith = (server: Http.Server, domains: DomainRoutes) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const engine = yield* AgentEngine
    const owner = yield* Gateway
    const keys = yield* ApiKeys
    const tokens = yield* GatewayTokens.GatewayTokens
    const table = ReadModels.AgentsTable.queries(yield* SqlClient.SqlClient)
    const apps = domains.appsDomain.toLowerCase()
    const context = yield* Effect.context<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseWith(context)(effect)

    /** The caller of an agent's host: the agent's current gateway token, or an API key of its workspace with `org:agents`. */
    const admit = (agentId: string, credential: AppProxy.AgentHostCredential) =>
      Effect.gen(function*() {
        const found = yield* table.byId(agentId)
        if (Option.isNone(found)) return { admitted: false, status: 404, body: { error: "Agent not found" } } as const
        const agent = found.value
        if (credential.gatewayToken !== undefined) {
          if (!tokens.matches(agentId, agent.tokenGeneration, credential.gatewayToken)) return unauthorized("stale-gateway-token")
        } else if (credential.bearer !== undefined) {
          const principal = yield* keys.authenticate(credential.bearer).pipe(
            Effect.map((principal) => ({ principal })),
            Effect.catchTags({
              Unauthorized: (error) => Effect.succeed({ refused: error.reason }),
              MissingUserId: () => Effect.succeed({ refused: "missing-claims" })
            })
          )
          if ("refused" in principal) return unauthorized(principal.refused)
          if (principal.principal.workspaceId !== agent.workspaceId) return unauthorized("other-workspace")
          if (!principal.principal.scopes.includes("org:agents")) return unauthorized("missing-scope")
        } else {
          return unauthorized(credential.crossOriginCookie === true ? "cross-origin-cookie" : "missing-credentials")
        }
        return { admitted: true, gatewayToken: Redacted.value(tokens.tokenFor(agentId, agent.tokenGeneration)) } as const
      })

    /**
     * A starting agent is 503 with Retry-After. What every route that needs the gateway answers while it starts
     * (GatewayStarting), with the agent's status.
     */
    const startingRefusal = (agentId: string) => {
      const starting = new Agent.GatewayStarting({ agentId })
      return { status: starting.status, body: { error: starting.message, status: "starting" }, headers: { "retry-after": String(starting.retryAfterSeconds) } }
    }

    /**
     * The agent's running gateway on this node (a sleeping agent woken first, decision 0055); a starting agent is 503
     * with Retry-After, any other 502.
     */
    const gateway = (agentId: string) =>
      owner.ready(agentId).pipe(
        Effect.andThen(engine.gatewayEndpoint(agentId)),
        Effect.map((endpoint): { readonly endpoint: AppProxy.AppEndpoint } | ({ readonly endpoint?: undefined } & AppProxy.Refusal) => ({ endpoint })),
        Effect.catchTags({
          GatewayStarting: () => Effect.succeed(startingRefusal(agentId)),
          AppNotRunning: () => notRunning(agentId),
          AgentNotProvisioned: () => notRunning(agentId)
        })
      )
    const notRunning = (agentId: string) =>
      Effect.gen(function*() {
        const status = Option.match(yield* table.byId(agentId), { onNone: () => "not_running", onSome: (agent) => agent.status })
        const engineState = yield* engine.status(agentId).pipe(Effect.map((s) => s.state), Effect.orElseSucceed(() => undefined))
        const provisioning = yield* engine.provisioning(agentId)
        if (status === "starting" || engineState === "starting" || provisioning !== undefined) return startingRefusal(agentId)
        return { status: 502, body: { error: "Agent is not running", status: status === "running" ? engineState ?? "not_running" : status } }
      })

    const agentOfHost = domains.agentOfHost
    const proxy = AppProxy.attach(server, {
      route: (host) =>
        run(Effect.map(domains.routeFor(host), (route) =>
          Option.isNone(route)
            ? undefined
            : {
              agentId: route.value.agentId,
              targetPort: route.value.targetPort,
              protected: route.value.protected,
              ...(route.value.gateway === true ? { gateway: true } : {})
            })),
      authorize: (agentId, token) => run(Effect.map(agents.gatewayPrincipal(agentId, token), Option.isSome)),
      // An app of a sleeping agent wakes it: its app runs in the agent's sandbox, beside its gateway.
      endpoint: (agentId, port) => run(Effect.andThen(owner.ready(agentId), engine.appEndpoint(agentId, port))),
      connected: (agentId) => Effect.runSyncWith(context)(owner.opened(agentId)),
      isAppHost: (host) => apps !== "" && host.endsWith(`.${apps}`),
      ...(agentOfHost === undefined ? {} : {
        agentHost: {
          agentOf: agentOfHost,
          admit: (agentId, credential) => run(admit(agentId, credential)),
          gateway: (agentId) => run(gateway(agentId))
        }
      })
    }, {
      onError: (message, error) => Effect.runForkWith(context)(Effect.logWarning(message, error))
    })
    yield* Effect.logInfo(`App routing: domains' hosts are proxied to agents' apps; ${apps}'s subdomains are apps' only`)
    yield* Effect.addFinalizer(() => Effect.sync(proxy.detach))
  })
