/**
 * Decides a command on an agent's domains. Adding refuses past the limit and a name the agent already has; a
 * subdomain is active at once, a custom domain pending its TXT record. Verifying an active domain, expiring one
 * that is not pending and changing nothing record nothing. Cross-agent uniqueness is not decided here but on the
 * name's reservation stream, in the same append (Domains service). Pure, total.
 */
import { Match, Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import type { DomainCommand } from "./Commands.ts"
import { DomainAlreadyAdded, type DomainError, DomainNotFound, SubdomainTaken } from "./Errors.ts"
import { DomainAdded, DomainChanged, type DomainEvent, DomainExpired, DomainRemoved, DomainVerified } from "./Events.ts"
import type { Domain, DomainsState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<DomainEvent>, DomainError>

/** The agent's domain by id; another agent's, or a removed one, is not found. */
export const domainOf = (state: DomainsState, domainId: string): Result.Result<Domain, DomainNotFound> => {
  const domain = state.domains.get(domainId)
  return domain === undefined ? Result.fail(new DomainNotFound({ domainId })) : Result.succeed(domain)
}

export const decide = (command: DomainCommand, state: DomainsState): Decision =>
  Match.valueTags(command, {
    AddDomain: ({ _tag, limit, ...fields }): Decision => {
      if (state.domains.has(fields.domainId)) return Result.succeed([])
      const same = [...state.domains.values()].find((d) => d.kind === fields.kind && d.name === fields.name)
      if (same !== undefined) {
        return Result.fail(fields.kind === "subdomain" ? new SubdomainTaken({ name: fields.name }) : new DomainAlreadyAdded({ name: fields.name }))
      }
      if (state.domains.size >= limit) return Result.fail(new ValidationFailed({ detail: `an agent has at most ${limit} domains` }))
      return Result.succeed([new DomainAdded({ ...fields, status: fields.kind === "subdomain" ? "active" : "pending_ownership" })])
    },
    ChangeDomain: ({ domainId, agentId, at, ...change }) =>
      Result.map(domainOf(state, domainId), (domain): ReadonlyArray<DomainEvent> => {
        const targetPort = change.targetPort ?? domain.targetPort
        const isProtected = change.protected ?? domain.protected
        return targetPort === domain.targetPort && isProtected === domain.protected
          ? []
          : [new DomainChanged({ domainId, agentId, targetPort, protected: isProtected, at })]
      }),
    VerifyDomain: ({ domainId, agentId, at }) =>
      Result.map(domainOf(state, domainId), (domain) =>
        domain.status === "active" ? [] : [new DomainVerified({ domainId, agentId, name: domain.name, at })]),
    ExpireDomain: ({ domainId, agentId, at }) =>
      Result.map(domainOf(state, domainId), (domain) => domain.status === "pending_ownership" ? [new DomainExpired({ domainId, agentId, at })] : []),
    RemoveDomain: ({ domainId, agentId, reason, at }) =>
      Result.map(domainOf(state, domainId), (domain) => [new DomainRemoved({ domainId, agentId, kind: domain.kind, name: domain.name, reason, at })]),
    RemoveAllDomains: ({ agentId, at }): Decision =>
      Result.succeed([...state.domains.values()].map((domain) =>
        new DomainRemoved({ domainId: domain.domainId, agentId, kind: domain.kind, name: domain.name, reason: "agent-deleted", at })
      ))
  })
