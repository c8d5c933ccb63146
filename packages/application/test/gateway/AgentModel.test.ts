import { assert, describe, it } from "@effect/vitest"
import { EngineChat } from "@cairn/agent-engine"
import { Result } from "effect"
import * as AgentModel from "../../src/gateway/AgentModel.ts"

describe("AgentModel", () => {
  it("sets the agents' primary model, keeping everything else (fallbacks, other defaults, other settings)", () => {
    const config = { gateway: { port: 1 }, agents: { defaults: { workspace: "/w", model: { primary: "a/b", fallbacks: ["c/d"] } }, list: [] } }
    assert.deepStrictEqual(AgentModel.withModel(config, "openai/gpt-5"), {
      gateway: { port: 1 },
      agents: { defaults: { workspace: "/w", model: { primary: "openai/gpt-5", fallbacks: ["c/d"] } }, list: [] }
    })
    assert.deepStrictEqual(AgentModel.withModel({}, "openai/gpt-5"), { agents: { defaults: { model: { primary: "openai/gpt-5" } } } })
    // A model given as a plain string becomes the object form.
    assert.deepStrictEqual(AgentModel.withModel({ agents: { defaults: { model: "x/y" } } }, "openai/gpt-5"), { agents: { defaults: { model: { primary: "openai/gpt-5" } } } })
  })

  it("removes the primary model on null, and what is left empty with it", () => {
    assert.deepStrictEqual(AgentModel.withModel({ gateway: {}, agents: { defaults: { model: { primary: "a/b" } } } }, null), { gateway: {} })
    assert.deepStrictEqual(AgentModel.withModel({ agents: { defaults: { model: { primary: "a/b", fallbacks: ["c/d"] } } } }, null), {
      agents: { defaults: { model: { fallbacks: ["c/d"] } } }
    })
  })

  it("reads the primary model in either form", () => {
    assert.strictEqual(EngineChat.configuredModel({ agents: { defaults: { model: "x/y" } } }), "x/y")
    assert.strictEqual(EngineChat.configuredModel({ agents: { defaults: { model: { primary: "a/b" } } } }), "a/b")
    assert.isUndefined(EngineChat.configuredModel({}))
  })

  it("takes models as provider/model only", () => {
    assert.isTrue(Result.isSuccess(AgentModel.validateModel("fakellm/fake-1")))
    assert.isTrue(Result.isSuccess(AgentModel.validateModel("openrouter/meta/llama-3:free")))
    for (const bad of ["gpt-5", "/x", "a/", 5, null, "a b/c"]) assert.isTrue(Result.isFailure(AgentModel.validateModel(bad)), String(bad))
  })
})
