import { Agent, Secret } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const agentId = "a"
const created = new Agent.AgentCreated({ agentId, workspaceId: "w", userId: "u", name: "A", engineVersion: "2026.3.8", node: "n1", at })
const started = new Agent.AgentStarted({ agentId, engineVersion: "2026.3.8", node: "n1", at })
const crashed = new Agent.AgentStopped({ agentId, reason: "crashed", at })
const deleted = new Agent.AgentDeleted({ agentId, at })
const offeredVersions = ["2026.3.1", "2026.3.8", "2026.10.1"]
const restart = (version?: string, workspaceId = "w") =>
  new Agent.RestartAgent({ agentId, workspaceId, offeredVersions, at, ...(version === undefined ? {} : { version }) })
const stateAfter = (events: ReadonlyArray<Agent.AgentEvent>) => events.reduce(Agent.evolve, Agent.initial)

describe("creating an agent", () => {
  it("records it once, starting", () => {
    const create = new Agent.CreateAgent({ agentId, workspaceId: "w", userId: "u", name: "A", engineVersion: "2026.3.8", node: "n1", secrets: [], at })
    given(Agent.decider).when(create).then([created])
    given(Agent.decider, [created]).when(create).thenFails(new Agent.AgentAlreadyExists({ agentId }))
    const state = stateAfter([created])
    assert.isTrue(state._tag === "Live" && state.agent.status === "starting" && state.agent.node === "n1")
  })
})

describe("restarting an agent", () => {
  it("stays on its version unless another is asked for", () => {
    given(Agent.decider, [created, started]).when(restart()).then([new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.3.8", at })])
    given(Agent.decider, [created, started]).when(restart("2026.10.1")).then([new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.10.1", at })])
  })

  it("refuses a version not on offer, or older than the agent runs, with 400 Invalid version", () => {
    given(Agent.decider, [created, started]).when(restart("1999.1.1")).thenFails(new Agent.InvalidVersion({ version: "1999.1.1" }))
    given(Agent.decider, [created, started]).when(restart("2026.3.1")).thenFails(new Agent.InvalidVersion({ version: "2026.3.1" }))
  })

  it("is refused for another workspace's agent and for a deleted one, with 404 Agent not found", () => {
    given(Agent.decider, [created]).when(restart(undefined, "other")).thenFails(new Agent.AgentNotFound({ agentId }))
    given(Agent.decider, [created, deleted]).when(restart()).thenFails(new Agent.AgentNotFound({ agentId }))
    given(Agent.decider).when(restart()).thenFails(new Agent.AgentNotFound({ agentId }))
  })
})

describe("the supervisor's reports", () => {
  it("record a crash only while the agent runs: a restart or a delete recorded first wins", () => {
    const report = new Agent.RecordCrash({ agentId, at })
    given(Agent.decider, [created, started]).when(report).then([crashed])
    given(Agent.decider, [created, started, new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.3.8", at })]).when(report).then([])
    given(Agent.decider, [created, started, deleted]).when(report).then([])
  })

  it("end at a deleted agent: recovery and relaunch are refused", () => {
    given(Agent.decider, [created, started, crashed, deleted])
      .when(new Agent.ScheduleRecovery({ agentId, attempt: 0, delayMs: 1000, at }))
      .thenFails(new Agent.AgentNotFound({ agentId }))
    given(Agent.decider, [created, deleted]).when(new Agent.RelaunchAgent({ agentId, at })).thenFails(new Agent.AgentNotFound({ agentId }))
    given(Agent.decider, [created, deleted])
      .when(new Agent.RecordAgentStarted({ agentId, engineVersion: "2026.3.8", node: "n1", secrets: [], at }))
      .thenFails(new Agent.AgentNotFound({ agentId }))
  })

  it("relaunch an agent on its own version", () => {
    given(Agent.decider, [created, started, crashed]).when(new Agent.RelaunchAgent({ agentId, at }))
      .then([new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.3.8", at })])
  })
})

describe("an agent's secrets", () => {
  const anthropicKey = { secretId: "s1", name: "ANTHROPIC_API_KEY" }
  const anthropicOauth = { secretId: "s2", name: "ANTHROPIC_OAUTH_TOKEN" }
  const openrouter = { secretId: "s3", name: "OPENROUTER_API_KEY" }
  const attach = (...secrets: Array<Agent.AttachedSecret>) => new Agent.AttachSecrets({ agentId, workspaceId: "w", secrets, at })
  const attached = (...secrets: Array<Agent.AttachedSecret>) => new Agent.AgentSecretsAttached({ agentId, secrets, at })

  it("are attached once each", () => {
    given(Agent.decider, [created]).when(attach(anthropicKey, openrouter, anthropicKey)).then([attached(anthropicKey, openrouter)])
    given(Agent.decider, [created, attached(anthropicKey)]).when(attach(anthropicKey, openrouter)).then([attached(openrouter)])
    given(Agent.decider, [created, attached(anthropicKey)]).when(attach(anthropicKey)).then([])
  })

  it("never hold two credentials for one provider: 409 Conflicting secrets, naming the provider and both", () => {
    const refused = new Secret.ConflictingSecrets({ provider: "anthropic", names: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"] })
    given(Agent.decider, [created, attached(anthropicKey)]).when(attach(anthropicOauth)).thenFails(refused)
    given(Agent.decider, [created]).when(attach(anthropicKey, anthropicOauth)).thenFails(refused)
    const create = new Agent.CreateAgent({ agentId, workspaceId: "w", userId: "u", name: "A", engineVersion: "2026.3.8", node: "n1", secrets: [anthropicOauth, anthropicKey], at })
    given(Agent.decider).when(create).thenFails(refused)
    assert.strictEqual(refused.message, "Conflicting secrets")
    assert.strictEqual(refused.status, 409)
  })

  it("may follow each other for one provider once the first is detached", () => {
    const detached = new Agent.AgentSecretDetached({ agentId, secretId: "s1", at })
    given(Agent.decider, [created, attached(anthropicKey)]).when(new Agent.DetachSecret({ agentId, workspaceId: "w", secretId: "s1", at })).then([detached])
    given(Agent.decider, [created, attached(anthropicKey), detached]).when(attach(anthropicOauth)).then([attached(anthropicOauth)])
  })

  it("are attached with the agent when it is created with them", () => {
    const create = new Agent.CreateAgent({ agentId, workspaceId: "w", userId: "u", name: "A", engineVersion: "2026.3.8", node: "n1", secrets: [anthropicKey], at })
    given(Agent.decider).when(create).then([created, attached(anthropicKey)])
  })

  it("are another workspace's business: not found", () => {
    given(Agent.decider, [created]).when(new Agent.AttachSecrets({ agentId, workspaceId: "other", secrets: [openrouter], at }))
      .thenFails(new Agent.AgentNotFound({ agentId }))
  })
})

describe("an agent's gateway token and deletion", () => {
  it("rotate to the next generation", () => {
    given(Agent.decider, [created, new Agent.GatewayTokenRotated({ agentId, generation: 1, at })])
      .when(new Agent.RotateGatewayToken({ agentId, workspaceId: "w", at }))
      .then([new Agent.GatewayTokenRotated({ agentId, generation: 2, at })])
  })

  it("are the agent's workspace's to ask for", () => {
    given(Agent.decider, [created]).when(new Agent.DeleteAgent({ agentId, workspaceId: "w", at })).then([deleted])
    given(Agent.decider, [created]).when(new Agent.DeleteAgent({ agentId, workspaceId: "other", at })).thenFails(new Agent.AgentNotFound({ agentId }))
    given(Agent.decider, [created, deleted]).when(new Agent.DeleteAgent({ agentId, workspaceId: "w", at })).thenFails(new Agent.AgentNotFound({ agentId }))
  })
})

describe("an agent's state", () => {
  it("starts out starting, runs, and is not running after a failure or a crash", () => {
    const running = stateAfter([created, started])
    assert.isTrue(running._tag === "Live" && running.agent.status === "running")
    const afterCrash = Agent.evolve(running, crashed)
    assert.isTrue(afterCrash._tag === "Live" && afterCrash.agent.status === "not_running")
  })

  it("is recovering from a crash until it runs again, and a failed attempt does not end the recovery", () => {
    const recoveringOf = (events: ReadonlyArray<Agent.AgentEvent>) => {
      const state = stateAfter([created, ...events])
      return state._tag === "Live" && state.agent.recovering
    }
    const failed = new Agent.AgentFailedToStart({ agentId, logTail: "", at })
    assert.isFalse(recoveringOf([failed]), "a failed first start is the user's to retry")
    assert.isTrue(recoveringOf([started, crashed, failed]))
    assert.isFalse(recoveringOf([started, crashed, failed, started]))
    assert.isFalse(recoveringOf([started, new Agent.AgentStopped({ agentId, reason: "stopped", at })]))
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
    assert.isTrue(Result.isSuccess(Agent.visible(state, agentId, "w")))
    assert.isTrue(Result.isFailure(Agent.visible(state, agentId, "other")))
    assert.isTrue(Result.isFailure(Agent.visible(Agent.evolve(state, deleted), agentId, "w")))
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

describe("sleep and wake", () => {
  const sleep = new Agent.PutToSleep({ agentId, idleMs: 900_000, snapshotCid: "bafy-sleep", at })
  const fellAsleep = new Agent.AgentFellAsleep({ agentId, idleMs: 900_000, snapshotCid: "bafy-sleep", at })
  const wake = (reason: Agent.WakeReason) => new Agent.WakeAgent({ agentId, reason, at })

  it("puts only a running agent to sleep: one starting, crashed, asleep already or deleted stays as it is", () => {
    given(Agent.decider, [created, started]).when(sleep).then([fellAsleep])
    given(Agent.decider, [created]).when(sleep).then([])
    given(Agent.decider, [created, started, crashed]).when(sleep).then([])
    given(Agent.decider, [created, started, fellAsleep]).when(sleep).then([])
    given(Agent.decider, [created, started, deleted]).when(sleep).then([])
    const state = stateAfter([created, started, crashed, new Agent.AgentRecoveryScheduled({ agentId, attempt: 0, delayMs: 1, at }), started, fellAsleep])
    assert.isTrue(state._tag === "Live" && state.agent.status === "sleeping" && !state.agent.recovering)
  })

  it("wakes only a sleeping agent, once: a second wake, or one after a restart, records nothing", () => {
    given(Agent.decider, [created, started, fellAsleep]).when(wake("request")).then([new Agent.AgentWoken({ agentId, reason: "request", at })])
    given(Agent.decider, [created, started, fellAsleep, new Agent.AgentWoken({ agentId, reason: "task", at })]).when(wake("request")).then([])
    given(Agent.decider, [created, started, fellAsleep, new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.3.8", at })]).when(wake("task")).then([])
    given(Agent.decider, [created, started, fellAsleep, deleted]).when(wake("request")).thenFails(new Agent.AgentNotFound({ agentId }))
    const state = stateAfter([created, started, fellAsleep, new Agent.AgentWoken({ agentId, reason: "task", at })])
    assert.isTrue(state._tag === "Live" && state.agent.status === "starting")
  })

  it("lets a sleeping agent be restarted, and a crash report on one is not recorded", () => {
    given(Agent.decider, [created, started, fellAsleep]).when(restart()).then([new Agent.AgentRestartRequested({ agentId, engineVersion: "2026.3.8", at })])
    given(Agent.decider, [created, started, fellAsleep]).when(new Agent.RecordCrash({ agentId, at })).then([])
  })
})
