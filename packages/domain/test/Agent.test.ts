import { Agent, Workspace } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"

const at = "2026-11-22T10:00:00.000Z"
const workspace = (agentLimit: number) =>
  [new Workspace.WorkspaceCreated({ workspaceId: "w", name: "W", plan: "free", agentLimit, internal: false, at })].reduce(Workspace.evolve, Workspace.initial)
const take = (state: Workspace.WorkspaceState, agentId: string) => Workspace.takeAgentSlot(state, { workspaceId: "w", agentId, at })

describe("the agent quota", () => {
  it("gives slots up to the workspace's limit, then refuses with 403 Agent limit reached", () => {
    let state = workspace(2)
    for (const id of ["a1", "a2"]) state = Result.getOrThrow(take(state, id)).reduce(Workspace.evolve, state)
    const refused = Result.getFailure(take(state, "a3"))
    assert.isTrue(refused._tag === "Some" && refused.value.status === 403 && refused.value.message === "Agent limit reached")
  })

  it("frees a slot when an agent is deleted", () => {
    let state = Result.getOrThrow(take(workspace(1), "a1")).reduce(Workspace.evolve, workspace(1))
    state = Workspace.evolve(state, new Workspace.AgentSlotReleased({ workspaceId: "w", agentId: "a1", at }))
    assert.isTrue(Result.isSuccess(take(state, "a2")))
  })

  it("needs a workspace", () => {
    assert.isTrue(Result.isFailure(Workspace.takeAgentSlot(Workspace.initial, { workspaceId: "w", agentId: "a", at })))
  })
})

describe("an agent's name", () => {
  it("is required, at most 100 characters, without banned characters", () => {
    for (const bad of [undefined, "", "   ", "x".repeat(101), "a<script>", "a/b", "tab\there"]) {
      const error = Result.getFailure(Agent.validateName(bad))
      assert.isTrue(error._tag === "Some" && error.value.status === 400 && error.value.message.startsWith("Validation failed: "), String(bad))
    }
    assert.deepStrictEqual(Agent.validateName("  Ada's helper 🤖 "), Result.succeed("Ada's helper 🤖"))
    assert.isTrue(Result.isSuccess(Agent.validateName("é".repeat(100))))
  })
})

describe("an agent", () => {
  const created = new Agent.AgentCreated({ agentId: "a", workspaceId: "w", userId: "u", name: "A", engineVersion: "2026.3.8", at })
  it("starts out starting, runs, and is not running after a failure or a crash", () => {
    const started = [created, new Agent.AgentStarted({ agentId: "a", engineVersion: "2026.3.8", at })].reduce(Agent.evolve, Agent.initial)
    assert.isTrue(started._tag === "Live" && started.agent.status === "running")
    const crashed = Agent.evolve(started, new Agent.AgentStopped({ agentId: "a", reason: "crashed", at }))
    assert.isTrue(crashed._tag === "Live" && crashed.agent.status === "not_running")
  })

  it("is recovering from a crash until it runs again, and a failed attempt does not end the recovery", () => {
    const recoveringOf = (events: ReadonlyArray<Agent.AgentEvent>) => {
      const state = [created, ...events].reduce(Agent.evolve, Agent.initial)
      return state._tag === "Live" && state.agent.recovering
    }
    const started = new Agent.AgentStarted({ agentId: "a", engineVersion: "2026.3.8", at })
    const crashed = new Agent.AgentStopped({ agentId: "a", reason: "crashed", at })
    const failed = new Agent.AgentFailedToStart({ agentId: "a", logTail: "", at })
    assert.isFalse(recoveringOf([failed]), "a failed first start is the user's to retry")
    assert.isTrue(recoveringOf([started, crashed, failed]))
    assert.isFalse(recoveringOf([started, crashed, failed, started]))
    assert.isFalse(recoveringOf([started, new Agent.AgentStopped({ agentId: "a", reason: "stopped", at })]))
  })

  it("is brought back after delays that double per attempt and per recent crash, up to a cap", () => {
    const backoff = { initialMs: 1_000, maxMs: 300_000 }
    assert.deepStrictEqual([0, 1, 2, 3].map((attempt) => Agent.recoveryDelay(backoff, 0, attempt)), [1_000, 2_000, 4_000, 8_000])
    assert.strictEqual(Agent.recoveryDelay(backoff, 2, 0), 4_000)
    assert.strictEqual(Agent.recoveryDelay(backoff, 0, 20), 300_000)
    assert.strictEqual(Agent.recoveryDelay(backoff, 1_000, 1_000), 300_000)
  })

  it("is not visible to another workspace, nor once deleted", () => {
    const state = Agent.evolve(Agent.initial, created)
    assert.isTrue(Result.isSuccess(Agent.visible(state, "a", "w")))
    assert.isTrue(Result.isFailure(Agent.visible(state, "a", "other")))
    assert.isTrue(Result.isFailure(Agent.visible(Agent.evolve(state, new Agent.AgentDeleted({ agentId: "a", at })), "a", "w")))
  })
})
