/** An agent's domains as their events leave them, by id (removed ones are gone). */
import type { Kind, Status } from "./Events.ts"

export interface Domain {
  readonly domainId: string
  readonly agentId: string
  readonly workspaceId: string
  readonly kind: Kind
  readonly name: string
  readonly targetPort: number
  readonly protected: boolean
  readonly status: Status
  readonly verificationValue: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

export interface DomainsState {
  readonly domains: ReadonlyMap<string, Domain>
}

export const initial: DomainsState = { domains: new Map() }
