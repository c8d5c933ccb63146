import { Workspace } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const created = (agentLimit: number) =>
  new Workspace.WorkspaceCreated({ workspaceId: "w", name: "W", plan: "free", agentLimit, internal: false, at })
const take = (agentId: string) => new Workspace.TakeAgentSlot({ workspaceId: "w", agentId, at })
const taken = (agentId: string) => new Workspace.AgentSlotTaken({ workspaceId: "w", agentId, at })
const released = (agentId: string) => new Workspace.AgentSlotReleased({ workspaceId: "w", agentId, at })

describe("a workspace", () => {
  it("is created once", () => {
    const create = new Workspace.CreateWorkspace({ workspaceId: "w", name: "W", plan: "free", agentLimit: 1, internal: false, at })
    given(Workspace.decider).when(create).then([created(1)])
    given(Workspace.decider, [created(1)]).when(create).thenFails(new Workspace.WorkspaceAlreadyExists({ workspaceId: "w" }))
  })

  it("gives agent slots up to its limit, then refuses with 403 Agent limit reached", () => {
    given(Workspace.decider, [created(2)]).when(take("a1")).then([taken("a1")])
    given(Workspace.decider, [created(2), taken("a1")]).when(take("a2")).then([taken("a2")])
    const refused = given(Workspace.decider, [created(2), taken("a1"), taken("a2")]).when(take("a3")).decision
    assert.deepStrictEqual(refused, Result.fail(new Workspace.AgentLimitReached({ limit: 2 })))
    const error = Result.getFailure(refused)
    assert.isTrue(error._tag === "Some" && error.value.status === 403 && error.value.message === "Agent limit reached")
  })

  it("frees a slot when an agent is deleted", () => {
    given(Workspace.decider, [created(1), taken("a1")]).when(new Workspace.ReleaseAgentSlot({ workspaceId: "w", agentId: "a1", at })).then([released("a1")])
    given(Workspace.decider, [created(1), taken("a1"), released("a1")]).when(take("a2")).then([taken("a2")])
  })

  it("records nothing when an agent that held no slot gives it back", () => {
    given(Workspace.decider, [created(1)]).when(new Workspace.ReleaseAgentSlot({ workspaceId: "w", agentId: "a9", at })).then([])
  })

  it("must exist for slots to be taken, and for keys to name it", () => {
    given(Workspace.decider).when(take("a")).thenFails(new Workspace.WorkspaceNotFound({ workspaceId: "w" }))
    given(Workspace.decider).when(new Workspace.RequireWorkspace({ workspaceId: "w" })).thenFails(new Workspace.WorkspaceNotFound({ workspaceId: "w" }))
    given(Workspace.decider, [created(1)]).when(new Workspace.RequireWorkspace({ workspaceId: "w" })).then([])
  })

  it("is deleted only once it has no agents, and is then not found", () => {
    const remove = new Workspace.DeleteWorkspace({ workspaceId: "w", at })
    given(Workspace.decider, [created(1), taken("a1")]).when(remove).thenFails(new Workspace.WorkspaceHasAgents({ agents: 1 }))
    const deleted = new Workspace.WorkspaceDeleted({ workspaceId: "w", at })
    given(Workspace.decider, [created(1), taken("a1"), released("a1")]).when(remove).then([deleted])
    given(Workspace.decider, [created(1), deleted]).when(take("a2")).thenFails(new Workspace.WorkspaceNotFound({ workspaceId: "w" }))
    given(Workspace.decider, [created(1), deleted]).when(remove).thenFails(new Workspace.WorkspaceNotFound({ workspaceId: "w" }))
  })

  it("has a default agent limit per plan", () => {
    assert.strictEqual(Workspace.defaultAgentLimit("free"), 1)
    assert.strictEqual(Workspace.defaultAgentLimit("pro"), 10)
  })
})
