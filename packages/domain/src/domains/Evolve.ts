/** Folds one domain event into the agent's domains. */
import { Match } from "effect"
import type { DomainEvent } from "./Events.ts"
import type { Domain, DomainsState } from "./State.ts"

const changed = (state: DomainsState, domainId: string, change: (domain: Domain) => Domain): DomainsState => {
  const domain = state.domains.get(domainId)
  if (domain === undefined) return state
  return { domains: new Map(state.domains).set(domainId, change(domain)) }
}

export const evolve = (state: DomainsState, event: DomainEvent): DomainsState =>
  Match.valueTags(event, {
    DomainAdded: (e): DomainsState => ({
      domains: new Map(state.domains).set(e.domainId, {
        domainId: e.domainId,
        agentId: e.agentId,
        workspaceId: e.workspaceId,
        kind: e.kind,
        name: e.name,
        targetPort: e.targetPort,
        protected: e.protected,
        status: e.status,
        verificationValue: e.verificationValue,
        createdAt: e.at,
        updatedAt: e.at
      })
    }),
    DomainChanged: (e) => changed(state, e.domainId, (d) => ({ ...d, targetPort: e.targetPort, protected: e.protected, updatedAt: e.at })),
    DomainVerified: (e) => changed(state, e.domainId, (d) => ({ ...d, status: "active", updatedAt: e.at })),
    DomainExpired: (e) => changed(state, e.domainId, (d) => ({ ...d, status: "expired", updatedAt: e.at })),
    DomainRemoved: (e): DomainsState => {
      const domains = new Map(state.domains)
      domains.delete(e.domainId)
      return { domains }
    }
  })
