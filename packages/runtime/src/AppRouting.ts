/**
 * Agents' apps on their domains, wired into Cairn's Node server: the app proxy (@cairn/app-proxy) asks the Domains
 * service for a host's active route, Agents whether a presented gateway token is the agent's current one, and the
 * AgentEngine where the agent's app is reached from this node. Hosts under `APPS_DOMAIN` belong to apps alone (one
 * with no active domain is 404, never Cairn's API); every other host without an active domain is Cairn's. See
 * docs/operations.md, "Routing agents' apps".
 */
import { AgentEngine } from "@cairn/agent-engine"
import { AppProxy } from "@cairn/app-proxy"
import { Agents, Domains } from "@cairn/application"
import { Effect, Option } from "effect"
import type * as Http from "node:http"

/** What the proxy needs of the Domains service: its routes, and the domain apps' subdomains are made under. */
export interface DomainRoutes {
  readonly appsDomain: string
  readonly routeFor: (host: string) => Effect.Effect<
    Option.Option<{ readonly agentId: string; readonly targetPort: number; readonly protected: boolean }>,
    unknown
  >
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
    const apps = domains.appsDomain.toLowerCase()
    const context = yield* Effect.context<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseWith(context)(effect)
    const proxy = AppProxy.attach(server, {
      route: (host) =>
        run(Effect.map(domains.routeFor(host), (route) =>
          Option.isNone(route)
            ? undefined
            : { agentId: route.value.agentId, targetPort: route.value.targetPort, protected: route.value.protected })),
      authorize: (agentId, token) => run(Effect.map(agents.gatewayPrincipal(agentId, token), Option.isSome)),
      endpoint: (agentId, port) => run(engine.appEndpoint(agentId, port)),
      isAppHost: (host) => apps !== "" && host.endsWith(`.${apps}`)
    }, {
      onError: (message, error) => Effect.runForkWith(context)(Effect.logWarning(message, error))
    })
    yield* Effect.logInfo(`App routing: domains' hosts are proxied to agents' apps; ${apps}'s subdomains are apps' only`)
    yield* Effect.addFinalizer(() => Effect.sync(proxy.detach))
  })
