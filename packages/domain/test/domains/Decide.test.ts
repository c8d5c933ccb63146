/** The domains decider: add (limit, duplicates, status by kind), change, verify, expire, remove. */
import { Domain, ValidationFailed } from "@cairn/domain"
import { describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-23T10:00:00.000Z"
const agentId = "agent-1"
const base = { agentId, workspaceId: "ws-1", targetPort: 3000, protected: false, at }
const addSub = (domainId: string, name: string, limit = 5) => new Domain.AddDomain({ ...base, domainId, kind: "subdomain", name, limit })
const addCustom = (domainId: string, name: string, limit = 5) =>
  new Domain.AddDomain({ ...base, domainId, kind: "custom", name, verificationValue: `v-${domainId}`, limit })
const subAdded = (domainId: string, name: string) => new Domain.DomainAdded({ ...base, domainId, kind: "subdomain", name, status: "active" })
const customAdded = (domainId: string, name: string) =>
  new Domain.DomainAdded({ ...base, domainId, kind: "custom", name, status: "pending_ownership", verificationValue: `v-${domainId}` })

describe("AddDomain", () => {
  it("adds a subdomain active at once and a custom domain pending its ownership proof", () => {
    given(Domain.decider).when(addSub("d1", "shop")).then([subAdded("d1", "shop")])
    given(Domain.decider).when(addCustom("d2", "shop.example.com")).then([customAdded("d2", "shop.example.com")])
  })

  it("refuses a domain past the agent's limit with Validation failed", () => {
    const five = ["a", "b", "c", "d", "e"].map((n, i) => subAdded(`d${i}`, n))
    given(Domain.decider, five).when(addSub("d9", "f")).thenFails(new ValidationFailed({ detail: "an agent has at most 5 domains" }))
  })

  it("counts removed domains out of the limit", () => {
    const history = [
      ...["a", "b", "c", "d", "e"].map((n, i) => subAdded(`d${i}`, n)),
      new Domain.DomainRemoved({ domainId: "d0", agentId, kind: "subdomain", name: "a", reason: "removed", at })
    ]
    given(Domain.decider, history).when(addSub("d9", "f")).then([subAdded("d9", "f")])
  })

  it("refuses a name the agent already has (409), and repeats of the same id record nothing", () => {
    given(Domain.decider, [subAdded("d1", "shop")]).when(addSub("d2", "shop")).thenFails(new Domain.SubdomainTaken({ name: "shop" }))
    given(Domain.decider, [customAdded("d1", "x.example")]).when(addCustom("d2", "x.example")).thenFails(new Domain.DomainAlreadyAdded({ name: "x.example" }))
    given(Domain.decider, [subAdded("d1", "shop")]).when(addSub("d1", "shop")).then([])
  })
})

describe("ChangeDomain", () => {
  it("records the new port and protection, nothing when nothing changes, 404 for an unknown id", () => {
    const history = [subAdded("d1", "shop")]
    given(Domain.decider, history).when(new Domain.ChangeDomain({ domainId: "d1", agentId, targetPort: 4000, at }))
      .then([new Domain.DomainChanged({ domainId: "d1", agentId, targetPort: 4000, protected: false, at })])
    given(Domain.decider, history).when(new Domain.ChangeDomain({ domainId: "d1", agentId, protected: true, at }))
      .then([new Domain.DomainChanged({ domainId: "d1", agentId, targetPort: 3000, protected: true, at })])
    given(Domain.decider, history).when(new Domain.ChangeDomain({ domainId: "d1", agentId, targetPort: 3000, at })).then([])
    given(Domain.decider, history).when(new Domain.ChangeDomain({ domainId: "nope", agentId, at }))
      .thenFails(new Domain.DomainNotFound({ domainId: "nope" }))
  })
})

describe("VerifyDomain and ExpireDomain", () => {
  it("verifies a pending (or expired) custom domain; an active one records nothing", () => {
    const pending = [customAdded("d1", "x.example")]
    given(Domain.decider, pending).when(new Domain.VerifyDomain({ domainId: "d1", agentId, at }))
      .then([new Domain.DomainVerified({ domainId: "d1", agentId, name: "x.example", at })])
    const expired = [...pending, new Domain.DomainExpired({ domainId: "d1", agentId, at })]
    given(Domain.decider, expired).when(new Domain.VerifyDomain({ domainId: "d1", agentId, at }))
      .then([new Domain.DomainVerified({ domainId: "d1", agentId, name: "x.example", at })])
    given(Domain.decider, [subAdded("d2", "shop")]).when(new Domain.VerifyDomain({ domainId: "d2", agentId, at })).then([])
  })

  it("expires only a pending domain", () => {
    given(Domain.decider, [customAdded("d1", "x.example")]).when(new Domain.ExpireDomain({ domainId: "d1", agentId, at }))
      .then([new Domain.DomainExpired({ domainId: "d1", agentId, at })])
    given(Domain.decider, [subAdded("d2", "shop")]).when(new Domain.ExpireDomain({ domainId: "d2", agentId, at })).then([])
  })
})

describe("RemoveDomain", () => {
  it("removes with the name (so its reservation can be released) and 404s an unknown or removed one", () => {
    const history = [subAdded("d1", "shop")]
    const removed = new Domain.DomainRemoved({ domainId: "d1", agentId, kind: "subdomain", name: "shop", reason: "removed", at })
    given(Domain.decider, history).when(new Domain.RemoveDomain({ domainId: "d1", agentId, reason: "removed", at })).then([removed])
    given(Domain.decider, [...history, removed]).when(new Domain.RemoveDomain({ domainId: "d1", agentId, reason: "removed", at }))
      .thenFails(new Domain.DomainNotFound({ domainId: "d1" }))
  })
})

describe("RemoveAllDomains", () => {
  it("removes every domain the agent still has, as deleted with it; none left records nothing", () => {
    const removed = new Domain.DomainRemoved({ domainId: "d1", agentId, kind: "subdomain", name: "shop", reason: "removed", at })
    given(Domain.decider, [subAdded("d1", "shop"), customAdded("d2", "x.example"), removed, subAdded("d3", "blog")])
      .when(new Domain.RemoveAllDomains({ agentId, at }))
      .then([
        new Domain.DomainRemoved({ domainId: "d2", agentId, kind: "custom", name: "x.example", reason: "agent-deleted", at }),
        new Domain.DomainRemoved({ domainId: "d3", agentId, kind: "subdomain", name: "blog", reason: "agent-deleted", at })
      ])
    given(Domain.decider, [subAdded("d1", "shop"), removed]).when(new Domain.RemoveAllDomains({ agentId, at })).then([])
  })
})
