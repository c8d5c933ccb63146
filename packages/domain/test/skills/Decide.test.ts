import { Agent, Skill, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-23T10:00:00.000Z"
const skillId = "k1"
const added = new Skill.SkillAdded({
  skillId, workspaceId: "w", userId: "u", name: "weather", description: "Forecasts", envVars: [], source: "cid", cid: "bafy1", at
})
const attached = new Skill.SkillAttached({ skillId, agentId: "a1", agentName: "helper", at })
const nextVersion = (cid: string, workspaceId = "w") =>
  new Skill.AddSkillVersion({ skillId, workspaceId, cid, description: "Forecasts, better", envVars: [{ name: "API_KEY" }], at })

describe("a library skill", () => {
  it("is added once, at revision 1", () => {
    const { _tag, ...fields } = added
    given(Skill.decider).when(new Skill.AddSkill(fields)).then([added])
    given(Skill.decider, [added]).when(new Skill.AddSkill(fields)).thenFails(new Skill.SkillAlreadyExists({ skillId }))
  })

  it("takes a new folder as its next revision, and refuses a folder it already has", () => {
    given(Skill.decider, [added]).when(nextVersion("bafy2")).then([
      new Skill.SkillVersionAdded({ skillId, revision: 2, cid: "bafy2", description: "Forecasts, better", envVars: [{ name: "API_KEY" }], at })
    ])
    given(Skill.decider, [added]).when(nextVersion("bafy1")).thenFails(new Skill.SkillAlreadyInLibrary({ name: "weather" }))
    const state = given(Skill.decider, [added]).when(nextVersion("bafy2")).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Active" && Skill.current(state.success.skill).cid === "bafy2")
  })

  it("is not found by another workspace, nor once removed", () => {
    given(Skill.decider, [added]).when(nextVersion("bafy2", "other")).thenFails(new Skill.SkillNotFound({ skill: skillId }))
    const removed = new Skill.SkillRemoved({ skillId, at })
    given(Skill.decider, [added, removed]).when(nextVersion("bafy2")).thenFails(new Skill.SkillNotFound({ skill: skillId }))
  })

  it("is not removed while attached: 409 naming the agents", () => {
    const remove = new Skill.RemoveSkill({ skillId, workspaceId: "w", at })
    const refusal = given(Skill.decider, [added, attached]).when(remove)
    refusal.thenFails(new Skill.SkillInUse({ skillId, agents: [{ agentId: "a1", name: "helper" }] }))
    const error = Result.getFailure(refusal.decision)
    assert.isTrue(error._tag === "Some" && error.value.status === 409 && error.value.message.includes("helper (a1)"))
    const detached = new Skill.SkillDetached({ skillId, agentId: "a1", at })
    given(Skill.decider, [added, attached, detached]).when(remove).then([new Skill.SkillRemoved({ skillId, at })])
  })

  it("records an attachment or a detachment once", () => {
    const attach = new Skill.AttachSkill({ skillId, workspaceId: "w", agentId: "a1", agentName: "helper", at })
    given(Skill.decider, [added]).when(attach).then([attached])
    given(Skill.decider, [added, attached]).when(attach).then([])
    given(Skill.decider, [added]).when(new Skill.DetachSkill({ skillId, workspaceId: "w", agentId: "a1", at })).then([])
  })

  it("has a name that can be a folder", () => {
    assert.isTrue(Result.isSuccess(Skill.validateName("web-search_2")))
    for (const bad of ["", "../x", "a b", "x/y", "a".repeat(65), 3]) assert.isTrue(Result.isFailure(Skill.validateName(bad)))
  })
})

describe("an agent's skills", () => {
  const created = new Agent.AgentCreated({ agentId: "a1", workspaceId: "w", userId: "u", name: "helper", engineVersion: "2026.4.2", at })
  const skill = (n: number, revision = 1): Agent.AttachedSkill => ({ skillId: `k${n}`, name: `skill-${n}`, cid: `bafy${n}-${revision}`, revision })
  const attach = (skills: ReadonlyArray<Agent.AttachedSkill>) => new Agent.AttachSkills({ agentId: "a1", workspaceId: "w", skills, at })

  it("attaches new skills once each", () => {
    given(Agent.decider, [created]).when(attach([skill(1), skill(1), skill(2)]))
      .then([new Agent.AgentSkillsAttached({ agentId: "a1", skills: [skill(1), skill(2)], at })])
    const held = new Agent.AgentSkillsAttached({ agentId: "a1", skills: [skill(1)], at })
    given(Agent.decider, [created, held]).when(attach([skill(1)])).then([])
  })

  it("holds at most 10: the eleventh is refused with the documented message", () => {
    const ten = new Agent.AgentSkillsAttached({ agentId: "a1", skills: Array.from({ length: 10 }, (_, i) => skill(i)), at })
    given(Agent.decider, [created, ten]).when(attach([skill(10)]))
      .thenFails(new ValidationFailed({ detail: "skills exceeds maximum of 10" }))
    given(Agent.decider, [created]).when(attach(Array.from({ length: 11 }, (_, i) => skill(i))))
      .thenFails(new ValidationFailed({ detail: "skills exceeds maximum of 10" }))
  })

  it("moves an attached skill to another revision, and refuses one it does not hold", () => {
    const held = new Agent.AgentSkillsAttached({ agentId: "a1", skills: [skill(1)], at })
    const update = (s: Agent.AttachedSkill) => new Agent.UpdateSkill({ agentId: "a1", workspaceId: "w", skill: s, at })
    given(Agent.decider, [created, held]).when(update(skill(1, 2))).then([new Agent.AgentSkillUpdated({ agentId: "a1", skill: skill(1, 2), at })])
    given(Agent.decider, [created, held]).when(update(skill(1))).then([])
    given(Agent.decider, [created]).when(update(skill(1, 2))).thenFails(new Agent.SkillNotAttached({ skillId: "k1" }))
  })

  it("detaches a held skill once", () => {
    const held = new Agent.AgentSkillsAttached({ agentId: "a1", skills: [skill(1)], at })
    const detach = new Agent.DetachSkill({ agentId: "a1", workspaceId: "w", skillId: "k1", at })
    given(Agent.decider, [created, held]).when(detach).then([new Agent.AgentSkillDetached({ agentId: "a1", skillId: "k1", at })])
    given(Agent.decider, [created]).when(detach).then([])
  })
})
