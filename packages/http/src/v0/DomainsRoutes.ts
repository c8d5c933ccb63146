/**
 * An agent's domains: list (`GET …/domains`), add a subdomain or a custom domain (`POST …/domains`, 201), change
 * its port or protection (`PUT …/domains/{domainId}`), remove it (`DELETE …/domains/{domainId}`) and verify a
 * custom domain's TXT record (`POST …/domains/{domainId}/verify`: 200 with `verified` true or false, never an
 * error for a record not seen yet). Every field of a body is checked by the service, for exact messages.
 */
import { Domains } from "@cairn/application"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

const DomainBody = Schema.Struct({
  subdomain: Schema.optional(Schema.Unknown),
  customDomain: Schema.optional(Schema.Unknown),
  targetPort: Schema.optional(Schema.Unknown),
  protected: Schema.optional(Schema.Unknown)
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const domains = yield* Domains

    yield* agentRoute("GET", "/v0/agents/:agentId/domains", ({ principal, agentId }) =>
      Effect.map(domains.list(principal, agentId), (list) => ({ domains: list })))

    yield* agentRoute("POST", "/v0/agents/:agentId/domains", ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const domain = yield* domains.add(principal, agentId, yield* body(DomainBody))
        return Kit.created({ success: true, domain })
      }))

    yield* agentRoute("PUT", "/v0/agents/:agentId/domains/:domainId", ({ principal, agentId, params, body }) =>
      Effect.gen(function*() {
        const domain = yield* domains.update(principal, agentId, params["domainId"] ?? "", yield* body(DomainBody))
        return { success: true, domain }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/domains/:domainId", ({ principal, agentId, params }) =>
      Effect.as(domains.remove(principal, agentId, params["domainId"] ?? ""), { success: true, message: "Domain removed" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/domains/:domainId/verify", ({ principal, agentId, params }) =>
      Effect.map(domains.verify(principal, agentId, params["domainId"] ?? ""), (outcome) => ({
        success: true,
        verified: outcome.verified,
        message: outcome.message,
        domain: outcome.domain
      })))
  })
)
