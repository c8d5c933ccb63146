/**
 * Domains: the host names an agent's own app (a server listening on `targetPort` in its workspace) is reached by.
 * Stream `domains-<agentId>` holds all of an agent's domains. A subdomain `<label>.<APPS_DOMAIN>` is unique across
 * tenants through its reservation, claimed when it is added; a custom domain's, claimed when its TXT record at
 * `_service-verify.<domain>` is seen (until then several agents may try for it; the first verified wins).
 */
import type { Decider } from "../Decider.ts"
import type { DomainCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { DomainError } from "./Errors.ts"
import { DomainEvent, type Kind } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type DomainsState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, domainOf } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Name.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `domains-${agentId}`

/** The reservation that keeps a name to one domain across every agent and workspace. */
export const nameReservation = (kind: Kind, name: string) => `reservation-domain-${kind}-${name}`

/** Where a custom domain's ownership TXT record is published. */
export const verificationName = (host: string) => `_service-verify.${host}`

export const decider: Decider<DomainCommand, DomainEvent, DomainsState, DomainError> = { initial, decide, evolve, events: DomainEvent }
