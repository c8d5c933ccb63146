/**
 * The AgentEngine contract for chat (see ContractSection.ts; the shapes are Chat.ts's): a running gateway answers a
 * message with deltas that add up to its reply, then `done` once; a turn continues the session it names; the sessions
 * and their history (the newest `limit` messages, oldest first) are there to read; the models have `provider/model`
 * ids. A gateway that is not running answers ChatUnavailable; an agent the engine does not hold AgentNotProvisioned.
 * What the agent replies is the engine's to say: only the shapes are checked. Opt-in (`ContractOptions.chat`), as an
 * adapter may need a model it can reach before its agents can answer (`prepare`).
 */
import { assert } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import { type ChatEvent, type ChatReply, modelPattern } from "../Chat.ts"
import type { SectionContext } from "./ContractSection.ts"

export interface ChatContractOptions<R> {
  /** Makes the (running) agent able to answer (a model provider in its config), before it is first asked. */
  readonly prepare?: (agentId: string) => Effect.Effect<void, unknown, AgentEngine | R>
  /** How long a turn may take (`ChatRequest.timeoutMs`); 60 s by default. */
  readonly timeoutMs?: number
}

export const chatContract = <R>({ it, drive, freshAgent, aRunningAgent, timeout }: SectionContext<R>, options: ChatContractOptions<R> = {}): void => {
  const timeoutMs = options.timeoutMs ?? 60_000

  const prepared = new Set<string>()
  /** The shared running agent, made able to answer once. */
  const talkingAgent = Effect.gen(function*() {
    const agentId = yield* aRunningAgent
    if (!prepared.has(agentId) && options.prepare !== undefined) yield* options.prepare(agentId)
    prepared.add(agentId)
    return agentId
  })

  /** A whole turn: its events, checked (deltas adding up to the reply, one `done`, last), and its reply. */
  const turn = (agentId: string, message: string, sessionKey?: string) =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const events: ReadonlyArray<ChatEvent> = yield* Stream.runCollect(
        engine.chat(agentId, { message, timeoutMs, ...(sessionKey === undefined ? {} : { sessionKey }) })
      )
      const done = events.filter((event) => event.type === "done")
      assert.strictEqual(done.length, 1, "one done")
      assert.strictEqual(events[events.length - 1]?.type, "done", "done comes last")
      const reply: ChatReply = (done[0] as Extract<ChatEvent, { type: "done" }>).reply
      const deltas = events.flatMap((event) => (event.type === "delta" ? [event.text] : []))
      if (deltas.length > 0) assert.strictEqual(deltas.join(""), reply.reply, "the deltas add up to the reply")
      assert.isNotEmpty(reply.sessionKey)
      assert.match(reply.model, modelPattern)
      return reply
    })

  it.effect("answers a message, continues the session it names, and lists the session and its history", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* talkingAgent
      const first = yield* turn(agentId, "Reply with one word: hello")
      const second = yield* turn(agentId, "Reply with one word: again", first.sessionKey)
      assert.strictEqual(second.sessionKey, first.sessionKey, "the turn continued the session")

      const sessions = yield* engine.chatSessions(agentId)
      assert.isTrue(sessions.some((session) => session.sessionKey === first.sessionKey), JSON.stringify(sessions))

      const history = yield* engine.chatHistory(agentId, first.sessionKey, 100)
      const said = history.filter((message) => message.role === "user").map((message) => message.text)
      assert.deepStrictEqual(said.slice(-2).map((text) => text.includes("hello") || text.includes("again")), [true, true], JSON.stringify(history))
      assert.isTrue(history.some((message) => message.role === "assistant"), "the replies are in the history")
      const newest = yield* engine.chatHistory(agentId, first.sessionKey, 1)
      assert.strictEqual(newest.length, 1)
      assert.deepStrictEqual(newest[0], history[history.length - 1], "the newest message")
    }), timeout)

  it.effect("refuses an unknown session's history, and lists models as provider/model", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* talkingAgent
      const unknown = `no-such-session-${Date.now().toString(36)}`
      assert.deepInclude(yield* Effect.flip(engine.chatHistory(agentId, unknown, 10)), { _tag: "ChatSessionNotFound", sessionKey: unknown })
      const { defaultModel, models } = yield* engine.listModels(agentId)
      if (defaultModel !== undefined) assert.match(defaultModel, modelPattern)
      for (const model of models) {
        assert.match(model.id, modelPattern)
        assert.isTrue(model.id.startsWith(`${model.provider}/`), model.id)
      }
    }), timeout)

  it.effect("answers ChatUnavailable while the gateway is not running, and AgentNotProvisioned for an agent it does not hold", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      const chat = (id: string) => Stream.runCollect(engine.chat(id, { message: "hi", timeoutMs }))
      assert.deepInclude(yield* Effect.flip(chat(agentId)), { _tag: "ChatUnavailable" })
      assert.deepInclude(yield* Effect.flip(engine.chatSessions(agentId)), { _tag: "ChatUnavailable" })
      assert.deepInclude(yield* Effect.flip(engine.listModels(agentId)), { _tag: "ChatUnavailable" })
      yield* drive(engine.start(agentId))
      yield* engine.stop(agentId)
      assert.deepInclude(yield* Effect.flip(chat(agentId)), { _tag: "ChatUnavailable" }, "a stopped gateway")
      const missing = `no-such-agent-${Date.now()}`
      assert.deepInclude(yield* Effect.flip(chat(missing)), { _tag: "AgentNotProvisioned" })
      assert.deepInclude(yield* Effect.flip(engine.chatHistory(missing, "x", 1)), { _tag: "AgentNotProvisioned" })
    }), timeout)
}
