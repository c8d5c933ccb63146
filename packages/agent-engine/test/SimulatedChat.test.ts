/**
 * The simulated engine's chat (simulated/ChatStore.ts through the port): a running gateway answers `Echo: <message>`
 * word by word, keeps its sessions and their history, takes a model per session, lists its models from its config,
 * and a turn held by the control times out on the TestClock.
 */
import { AgentEngine, SimulatedAgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import type { ChatEvent } from "@cairn/agent-engine"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, Stream } from "effect"
import { TestClock } from "effect/testing"

const agentId = "agent-1"

/** A fresh engine with agent-1 provisioned and running (no start delay). */
const withRunningAgent = <A, E>(test: Effect.Effect<A, E, AgentEngine | SimulatedEngineControl>) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    const control = yield* SimulatedEngineControl
    yield* engine.provision(agentId, { version: control.defaultVersion, gatewayToken: Redacted.make("token") })
    yield* engine.start(agentId)
    return yield* test
  }).pipe(Effect.provide(SimulatedAgentEngine.layer({ startDelay: 0 })))

const chat = (message: string, options: { sessionKey?: string; model?: string; timeoutMs?: number } = {}) =>
  AgentEngine.use((engine) =>
    Stream.runCollect(engine.chat(agentId, { message, timeoutMs: options.timeoutMs ?? 120_000, ...options })))

const doneOf = (events: ReadonlyArray<ChatEvent>) => {
  const last = events[events.length - 1]
  assert.strictEqual(last?.type, "done")
  return (last as Extract<ChatEvent, { type: "done" }>).reply
}

describe("SimulatedAgentEngine chat", () => {
  it.effect("answers in deltas that add up to the reply, in a new session, on the default model", () =>
    withRunningAgent(Effect.gen(function*() {
      const events = yield* chat("hello there world")
      const deltas = events.filter((e) => e.type === "delta").map((e) => (e as { text: string }).text)
      assert.deepStrictEqual(deltas, ["Echo: ", "hello ", "there ", "world"])
      const done = doneOf(events)
      assert.strictEqual(done.reply, "Echo: hello there world")
      assert.strictEqual(deltas.join(""), done.reply)
      assert.strictEqual(done.model, "simulated/echo-1")
      assert.match(done.sessionKey, /^cairn-\d+$/)
      assert.deepStrictEqual(done.usage, { inputTokens: 3, outputTokens: 4, totalTokens: 7 })
    })))

  it.effect("continues a session, keeps its model, lists sessions newest first, and keeps the newest of its history", () =>
    withRunningAgent(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const first = doneOf(yield* chat("one", { model: "openai/gpt-5" }))
      const other = doneOf(yield* chat("elsewhere"))
      const second = doneOf(yield* chat("two", { sessionKey: first.sessionKey }))
      assert.strictEqual(second.sessionKey, first.sessionKey)
      assert.strictEqual(second.model, "openai/gpt-5")
      assert.notStrictEqual(other.sessionKey, first.sessionKey)
      const sessions = yield* engine.chatSessions(agentId)
      assert.deepStrictEqual(sessions.map((s) => [s.sessionKey, s.model]), [[first.sessionKey, "openai/gpt-5"], [other.sessionKey, "simulated/echo-1"]])
      const history = yield* engine.chatHistory(agentId, first.sessionKey, 100)
      assert.deepStrictEqual(history.map((m) => [m.role, m.text]), [["user", "one"], ["assistant", "Echo: one"], ["user", "two"], ["assistant", "Echo: two"]])
      assert.deepStrictEqual((yield* engine.chatHistory(agentId, first.sessionKey, 3)).map((m) => m.text), ["Echo: one", "two", "Echo: two"])
      assert.deepInclude(yield* Effect.flip(engine.chatHistory(agentId, "nope", 10)), { _tag: "ChatSessionNotFound", sessionKey: "nope" })
      // A session key named by the caller opens a session of that name.
      assert.strictEqual(doneOf(yield* chat("hi", { sessionKey: "mine" })).sessionKey, "mine")
    })))

  it.effect("takes the default model and the models from the runtime config", () =>
    withRunningAgent(Effect.gen(function*() {
      const engine = yield* AgentEngine
      const before = yield* engine.listModels(agentId)
      assert.strictEqual(before.defaultModel, "simulated/echo-1")
      assert.deepInclude(before.models, { id: "simulated/echo-1", name: "Echo 1", provider: "simulated", available: true })
      assert.deepInclude(before.models, { id: "openai/gpt-5", name: "GPT-5", provider: "openai", available: false, unavailableReason: "missing-auth" })
      const { config, hash } = yield* engine.readConfig(agentId)
      yield* engine.writeConfig(agentId, {
        config: {
          ...config,
          agents: { defaults: { model: { primary: "fakellm/fake-1" } } },
          models: { providers: { fakellm: { apiKey: "sk-test", models: [{ id: "fake-1", name: "Fake One" }] }, openai: { apiKey: "sk-openai" } } }
        },
        baseHash: hash
      })
      const after = yield* engine.listModels(agentId)
      assert.strictEqual(after.defaultModel, "fakellm/fake-1")
      assert.deepInclude(after.models, { id: "fakellm/fake-1", name: "Fake One", provider: "fakellm", available: true })
      assert.deepInclude(after.models, { id: "openai/gpt-5", name: "GPT-5", provider: "openai", available: true })
      assert.strictEqual(doneOf(yield* chat("hi")).model, "fakellm/fake-1")
    })))

  it.effect("refuses while the gateway is not running", () =>
    withRunningAgent(Effect.gen(function*() {
      const engine = yield* AgentEngine
      yield* engine.stop(agentId)
      assert.deepInclude(yield* Effect.flip(chat("hi")), { _tag: "ChatUnavailable" })
      assert.deepInclude(yield* Effect.flip(engine.chatSessions(agentId)), { _tag: "ChatUnavailable" })
      assert.deepInclude(yield* Effect.flip(engine.listModels(agentId)), { _tag: "ChatUnavailable" })
      assert.deepInclude(yield* Effect.flip(AgentEngine.use((e) => Stream.runCollect(e.chat("nobody", { message: "x", timeoutMs: 1 })))), { _tag: "AgentNotProvisioned" })
    })))

  it.effect("fails a turn the control fails, and times out a turn it holds, on the TestClock", () =>
    withRunningAgent(Effect.gen(function*() {
      const control = yield* SimulatedEngineControl
      yield* control.failNextChat(agentId, "model refused")
      assert.deepInclude(yield* Effect.flip(chat("hi")), { _tag: "ChatFailed", detail: "model refused" })
      yield* control.hangNextChat(agentId)
      const held = yield* Effect.forkChild(Effect.flip(chat("hi", { timeoutMs: 5000 })))
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(held.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.deepInclude(yield* Fiber.join(held), { _tag: "ChatTimedOut", timeoutMs: 5000 })
      // Only the next turn: the one after answers.
      assert.strictEqual(doneOf(yield* chat("again")).reply, "Echo: again")
    })))
})
