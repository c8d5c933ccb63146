/**
 * Requests for an agent that another node runs, forwarded there (@cairn/app-proxy NodeForwarding.ts; decision 0028),
 * wired into Cairn's Node server in front of everything else, so it is the one place every agent-scoped request
 * passes: `/v0/agents/{agentId}` and everything under it, the agent's apps' domains, and the agent's own host
 * (`<agentId>.<AGENTS_DOMAIN>`, decision 0046). The agent's node comes from its lease (NodeLeases); the credential
 * of a forwarded request is an HMAC, under a key derived from the gateway key every node shares, of its method,
 * target and time. Attached only when this node is one of several.
 */
import { AppProxy, NodeForwarding, RouteCache } from "@cairn/app-proxy"
import { ClusterSettings, Domains, NodeLeases } from "@cairn/application"
import { GatewayTokens } from "@cairn/auth"
import { Duration, Effect, Option, Redacted } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import type * as Http from "node:http"

/** How long a forwarded request's credential is good for (nodes' clocks may differ by this much). */
const credentialLifetimeMs = 60_000

/** Puts forwarding in front of `server`'s listeners (and of the app proxy) until the scope closes. */
export const attach = (server: Http.Server) =>
  Effect.gen(function*() {
    const leases = yield* NodeLeases
    if (!leases.enabled) return
    const domains = yield* Domains
    const settings = yield* ClusterSettings
    // A secret only nodes of this installation can derive: no agent id holds a NUL, so no gateway token equals it.
    const key = Redacted.value((yield* GatewayTokens.GatewayTokens).tokenFor("\u0000node-forwarding", 0))
    const mac = (at: string, method: string, url: string) => createHmac("sha256", key).update(`${at} ${method} ${url}`).digest("base64url")
    const context = yield* Effect.context<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseWith(context)(effect)
    const routes = new RouteCache<string>(
      (host) => run(Effect.map(domains.routeFor(host), Option.match({ onNone: () => undefined, onSome: (route) => route.agentId }))),
      { ttlMs: 2_000, staleMs: 60_000, maxEntries: 10_000 }
    )
    const attached = NodeForwarding.attach(server, {
      agentOf: (request) => {
        const fromPath = NodeForwarding.agentOfPath(request.url)
        if (fromPath !== undefined) return fromPath
        const host = AppProxy.hostOf(request)
        if (host === undefined) return undefined
        const own = domains.agentOfHost(host)
        if (own !== undefined) return own
        const known = routes.peek(host)
        return known === null ? undefined : known ?? routes.load(host)
      },
      ownerOf: (agentId) => run(Effect.map(leases.ownerOf(agentId), Option.match({ onNone: () => undefined, onSome: (peer) => peer.internalUrl }))),
      sign: (method, url) => {
        const at = String(Date.now())
        return `${at}.${mac(at, method, url)}`
      },
      verify: (credential, method, url) => {
        const [at = "", given = ""] = credential.split(".")
        if (!(Math.abs(Date.now() - Number(at)) <= credentialLifetimeMs)) return false
        const expected = Buffer.from(mac(at, method, url))
        const candidate = Buffer.from(given)
        return candidate.length === expected.length && timingSafeEqual(candidate, expected)
      },
      retryAfterSeconds: Math.max(1, Math.ceil(Duration.toSeconds(Duration.fromInputUnsafe(settings.leaseTtl)))),
      onError: (message, error) => Effect.runForkWith(context)(Effect.logWarning(message, error))
    })
    yield* Effect.logInfo("Forwarding: requests for agents another node runs go to that node")
    yield* Effect.addFinalizer(() => Effect.sync(attached.detach))
  })
