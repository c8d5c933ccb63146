/**
 * How the domain endpoints refuse (service interface §7.1): 404 for a domain id not on the agent, 409 for a
 * subdomain another agent holds and for a custom domain already verified by another agent (or already on this one),
 * 403 for custom domains on the free plan. Bad input is ValidationFailed (400), the limit included.
 */
import { Schema } from "effect"
import type { ValidationFailed } from "../ValidationFailed.ts"

export class DomainNotFound extends Schema.TaggedError<DomainNotFound>()("DomainNotFound", { domainId: Schema.String }) {
  readonly status = 404
  override readonly message = "Domain not found"
}

export class SubdomainTaken extends Schema.TaggedError<SubdomainTaken>()("SubdomainTaken", { name: Schema.String }) {
  readonly status = 409
  override readonly message = "Subdomain already taken"
}

export class DomainAlreadyVerified extends Schema.TaggedError<DomainAlreadyVerified>()("DomainAlreadyVerified", { name: Schema.String }) {
  readonly status = 409
  override readonly message = "Domain already registered and verified"
}

/** The agent already has this custom domain (pending or active). */
export class DomainAlreadyAdded extends Schema.TaggedError<DomainAlreadyAdded>()("DomainAlreadyAdded", { name: Schema.String }) {
  readonly status = 409
  override readonly message = "Domain already added to this agent"
}

export class CustomDomainsNotOnFreePlan extends Schema.TaggedError<CustomDomainsNotOnFreePlan>()("CustomDomainsNotOnFreePlan", {}) {
  readonly status = 403
  override readonly message = "Custom domains are not available on the free plan; subdomains are"
}

export type DomainError = DomainNotFound | SubdomainTaken | DomainAlreadyAdded | ValidationFailed
