/**
 * An agent's domains: list (`GET …/domains`), add a subdomain or a custom domain (`POST …/domains`, 201), change
 * its port or protection (`PUT …/domains/{domainId}`), remove it (`DELETE …/domains/{domainId}`) and verify a
 * custom domain's TXT record (`POST …/domains/{domainId}/verify`: 200 with `verified` true or false, never an
 * error for a record not seen yet). Every field of a body is checked by the service, for exact messages.
 */
import { AgentsAt, Domains, type DomainView } from "@cairn/application"
import { DnsUnavailable } from "@cairn/dns"
import { Agent, Domain } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { atDescription, AtQuery } from "./At.ts"
import * as Kit from "./Kit.ts"

const DomainBody = Schema.Struct({
  subdomain: Schema.optional(Schema.Unknown),
  customDomain: Schema.optional(Schema.Unknown),
  targetPort: Schema.optional(Schema.Unknown),
  protected: Schema.optional(Schema.Unknown)
})

/** A domain as the routes answer it; a custom domain not verified yet says which TXT record proves it. */
const DomainWire = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  subdomain: Schema.NullOr(Schema.String),
  customDomain: Schema.NullOr(Schema.String),
  targetPort: Schema.Int,
  protected: Schema.Boolean,
  status: Domain.Status,
  verification: Schema.optionalKey(Schema.Struct({ type: Schema.Literal("TXT"), name: Schema.String, value: Schema.String })),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
const toWire = (domain: DomainView): typeof DomainWire.Type => ({
  id: domain.id,
  agentId: domain.agentId,
  subdomain: domain.subdomain,
  customDomain: domain.customDomain,
  targetPort: domain.targetPort,
  protected: domain.protected,
  status: domain.status,
  ...(domain.verification === undefined
    ? {}
    : { verification: { type: domain.verification.type, name: domain.verification.name, value: domain.verification.value } }),
  createdAt: domain.createdAt,
  updatedAt: domain.updatedAt
})
const DomainDone = Schema.Struct({ success: Schema.Boolean, domain: DomainWire })

/** The resolver could not be asked when a custom domain's TXT record was looked up (verify). */
const dnsFailed = new DnsUnavailable({ name: "", code: "" })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const domains = yield* Domains
    const agentsAt = yield* AgentsAt

    yield* agentRoute("GET", "/v0/agents/:agentId/domains", { summary: "List the agent's domains (or as they were: `?at=`)", description: atDescription, query: AtQuery, response: { schema: Schema.Struct({ domains: Schema.Array(DomainWire) }) }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, ({ principal, agentId, request }) => {
      const at = Kit.query(request, "at")
      return at === null
        ? Effect.map(domains.list(principal, agentId), (list) => ({ domains: list.map(toWire) }))
        : Effect.map(agentsAt.at(principal, agentId, at), (found) => ({ domains: found.domains.map(toWire) }))
    })

    yield* agentRoute("POST", "/v0/agents/:agentId/domains", { summary: "Add a subdomain or a custom domain", body: { schema: DomainBody }, response: { status: 201, schema: DomainDone }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Domain.SubdomainTaken({ name: "" }), new Domain.DomainAlreadyVerified({ name: "" }), new Domain.DomainAlreadyAdded({ name: "" }), new Domain.CustomDomainsNotOnFreePlan()] }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const domain = yield* domains.add(principal, agentId, yield* body(DomainBody))
        return Kit.created({ success: true, domain: toWire(domain) })
      }))

    yield* agentRoute("PUT", "/v0/agents/:agentId/domains/:domainId", { summary: "Change a domain's port or protection", body: { schema: DomainBody }, response: { schema: DomainDone }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Domain.DomainNotFound({ domainId: "" })] }, ({ principal, agentId, params, body }) =>
      Effect.gen(function*() {
        const domain = yield* domains.update(principal, agentId, params["domainId"] ?? "", yield* body(DomainBody))
        return { success: true, domain: toWire(domain) }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/domains/:domainId", { summary: "Remove a domain", response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Domain.DomainNotFound({ domainId: "" })] }, ({ principal, agentId, params }) =>
      Effect.as(domains.remove(principal, agentId, params["domainId"] ?? ""), { success: true, message: "Domain removed" }))

    yield* agentRoute("POST", "/v0/agents/:agentId/domains/:domainId/verify", { summary: "Verify a custom domain's TXT record", response: { schema: Schema.Struct({ success: Schema.Boolean, verified: Schema.Boolean, message: Schema.String, domain: DomainWire }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Domain.DomainNotFound({ domainId: "" }), dnsFailed] }, ({ principal, agentId, params }) =>
      Effect.map(domains.verify(principal, agentId, params["domainId"] ?? ""), (outcome) => ({
        success: true,
        verified: outcome.verified,
        message: outcome.message,
        domain: toWire(outcome.domain)
      })))
  })
)
