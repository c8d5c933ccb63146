/**
 * Chat on a real OpenClaw gateway (ENGINE_IT=openclaw), offline: the agent's model is a loopback OpenAI-compatible
 * fake (FakeModelServer), which the agent reaches only through the operator's allowance (`egressAllow`), with its key
 * from the agent's environment. A turn streams deltas and ends with the whole reply, a session continues, its history
 * and the sessions list read back, the models list names the fake, and a turn that outlives its time is ChatTimedOut
 * (and aborted). A stopped gateway is ChatUnavailable.
 */
import { AgentEngine, type ChatEvent } from "@cairn/agent-engine"
import { FakeModelServer } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine } from "../src/index.ts"
import { reserveGatewayPorts } from "../src/testing/index.ts"

const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const version = "2026.9.6"
const basePort = enabled ? reserveGatewayPorts() : 0
const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-chat-")) : ""
const model = enabled ? await FakeModelServer.startFakeModelServer() : undefined

afterAll(async () => {
  await model?.close()
  if (dataDir !== "") Fs.rmSync(dataDir, { recursive: true, force: true })
})

const collect = (stream: Stream.Stream<ChatEvent, unknown>) => Stream.runCollect(stream).pipe(Effect.map((events) => [...events]))

describe.skipIf(!enabled)("chat on a real OpenClaw gateway", () => {
  layer(
    OpenClawAgentEngine.layer({
      dataDir,
      enginesDir: process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines"),
      versions: [version],
      basePort,
      startTimeout: "120 seconds",
      stopGrace: "15 seconds",
      compileCache: true,
      egressAllow: [{ host: "127.0.0.1", port: model?.port ?? 0 }]
    }),
    { excludeTestServices: true, timeout: "300 seconds" }
  )((it) => {
    it.effect("streams a reply from the agent's model, keeps the session, lists it, and times out a turn that takes too long", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const fake = model!
        const agentId = `chat-${Date.now().toString(36)}`
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make("chat-test-token-0123456789") })
        const { config } = yield* engine.readConfig(agentId)
        const provider = FakeModelServer.providerConfig(fake)
        yield* engine.writeConfig(agentId, {
          config: {
            ...config,
            models: provider.models,
            agents: { ...(config["agents"] as object), defaults: { ...((config["agents"] as { defaults?: object })?.defaults), ...provider.agents.defaults } }
          }
        })
        yield* engine.setEnvironment(agentId, { FAKELLM_API_KEY: Redacted.make(fake.apiKey) })

        const stopped = yield* collect(engine.chat(agentId, { message: "hello?", timeoutMs: 5_000 })).pipe(Effect.flip)
        assert.strictEqual((stopped as { _tag: string })._tag, "ChatUnavailable")

        yield* engine.start(agentId)
        const started = performance.now()
        const events = yield* collect(engine.chat(agentId, { message: "ping 42", timeoutMs: 120_000 }))
        console.log(`[chat] first turn on a fresh gateway: ${Math.round(performance.now() - started)} ms`)
        const done = events.at(-1)
        assert.strictEqual(done?.type, "done", JSON.stringify(events))
        const reply = done?.type === "done" ? done.reply : undefined
        assert.include(reply?.reply, FakeModelServer.fakeReply(""))
        assert.include(reply?.reply, "ping 42")
        assert.strictEqual(reply?.model, "fakellm/fake-1")
        const streamed = events.flatMap((event) => event.type === "delta" ? [event.text] : []).join("")
        assert.isAbove(events.length, 1, "deltas came before the end")
        assert.strictEqual(streamed, reply?.reply, "the deltas add up to the reply")
        assert.isTrue(fake.requests.some((request) => request.lastUserText.includes("ping 42")), "the model was asked")
        assert.isTrue(fake.requests.every((request) => request.authorization === `Bearer ${fake.apiKey}`), "with the agent's key")

        // The same session again: its history holds both turns.
        const sessionKey = reply!.sessionKey
        const second = yield* collect(engine.chat(agentId, { message: "pong 43", sessionKey, timeoutMs: 120_000 }))
        const secondDone = second.at(-1)
        assert.strictEqual(secondDone?.type === "done" ? secondDone.reply.sessionKey : undefined, sessionKey)
        const history = yield* engine.chatHistory(agentId, sessionKey, 100)
        const texts = history.map((message) => `${message.role}: ${message.text}`)
        assert.isTrue(texts.some((line) => line.startsWith("user: ") && line.includes("ping 42")), texts.join("\n"))
        assert.isTrue(texts.some((line) => line.startsWith("assistant: ") && line.includes("pong 43")), texts.join("\n"))
        const sessions = yield* engine.chatSessions(agentId)
        assert.isTrue(sessions.some((session) => session.sessionKey === sessionKey), JSON.stringify(sessions))
        const missing = yield* engine.chatHistory(agentId, "api-no-such-session", 10).pipe(Effect.flip)
        assert.strictEqual(missing._tag, "ChatSessionNotFound")

        // A turn that names another model: the session answers with it, and the reply says so.
        const other = `fakellm/${FakeModelServer.otherFakeModelId}`
        const named = yield* collect(engine.chat(agentId, { message: "which model?", model: other, timeoutMs: 120_000 }))
        const namedDone = named.at(-1)
        assert.strictEqual(namedDone?.type === "done" ? namedDone.reply.model : undefined, other)
        assert.strictEqual(fake.requests.at(-1)?.model, FakeModelServer.otherFakeModelId, "the model was asked as the model named")

        const models = yield* engine.listModels(agentId)
        assert.strictEqual(models.defaultModel, "fakellm/fake-1")
        assert.isTrue(models.models.some((entry) => entry.id === "fakellm/fake-1" && entry.available), JSON.stringify(models))

        // A model that never answers: the turn ends at its time, and the gateway is told to stop it.
        fake.hold()
        const timedOut = yield* collect(engine.chat(agentId, { message: "slow one", timeoutMs: 3_000 })).pipe(Effect.flip)
        fake.release()
        assert.strictEqual((timedOut as { _tag: string })._tag, "ChatTimedOut")
        yield* engine.destroy(agentId)
      }), 300_000)
  })
})
