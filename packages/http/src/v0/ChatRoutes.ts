/**
 * `/v0/agents/{id}/chat`: talk to the agent (issue 34). A message in, the reply out: as one JSON answer, or with
 * `"stream": true` as server-sent events (`delta` as the agent writes, then `done`; `error` if the turn fails once the
 * stream began). `/chat/sessions` lists the agent's conversations and `/chat/sessions/{sessionKey}` gives one's
 * messages; `/models` the models its gateway offers. Everything asks the agent's running gateway (AgentChat).
 */
import { AgentChat, type AgentChatStream, defaultHistoryLimit, maxHistoryLimit, maxMessageLength } from "@cairn/application"
import type { ChatMessage, ChatReply, ChatSession, EngineModels } from "@cairn/agent-engine"
import { Agent, AgentChats, isDocumentedError, isUnavailable } from "@cairn/domain"
import { Cause, Effect, Schema, Stream } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as Kit from "./Kit.ts"

const ChatBody = Schema.Struct({
  message: Schema.optional(Schema.Unknown),
  sessionKey: Schema.optional(Schema.Unknown),
  model: Schema.optional(Schema.Unknown),
  stream: Schema.optional(Schema.Boolean)
})

const UsageWire = Schema.Struct({
  inputTokens: Schema.optionalKey(Schema.Number),
  outputTokens: Schema.optionalKey(Schema.Number),
  totalTokens: Schema.optionalKey(Schema.Number)
})

const ReplyWire = Schema.Struct({
  reply: Schema.String,
  sessionKey: Schema.String,
  model: Schema.String,
  usage: Schema.optionalKey(UsageWire)
})

const replyWire = (reply: ChatReply): typeof ReplyWire.Type => ({
  reply: reply.reply,
  sessionKey: reply.sessionKey,
  model: reply.model,
  ...(reply.usage === undefined ? {} : {
    usage: {
      ...(reply.usage.inputTokens === undefined ? {} : { inputTokens: reply.usage.inputTokens }),
      ...(reply.usage.outputTokens === undefined ? {} : { outputTokens: reply.usage.outputTokens }),
      ...(reply.usage.totalTokens === undefined ? {} : { totalTokens: reply.usage.totalTokens })
    }
  })
})

const SessionWire = Schema.Struct({
  sessionKey: Schema.String,
  title: Schema.optionalKey(Schema.String),
  updatedAt: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String)
})
const sessionWire = (session: ChatSession): typeof SessionWire.Type => ({
  sessionKey: session.sessionKey,
  ...(session.title === undefined ? {} : { title: session.title }),
  ...(session.updatedAt === undefined ? {} : { updatedAt: session.updatedAt }),
  ...(session.model === undefined ? {} : { model: session.model })
})

const MessageWire = Schema.Struct({
  role: Schema.Literals(["user", "assistant", "system", "tool"]),
  text: Schema.String,
  at: Schema.optionalKey(Schema.String)
})
const messageWire = (message: ChatMessage): typeof MessageWire.Type => ({
  role: message.role,
  text: message.text,
  ...(message.at === undefined ? {} : { at: message.at })
})

const ModelWire = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  available: Schema.Boolean,
  unavailableReason: Schema.optionalKey(Schema.String)
})
const ModelsWire = Schema.Struct({ defaultModel: Schema.NullOr(Schema.String), models: Schema.Array(ModelWire) })
const modelsWire = (models: EngineModels): typeof ModelsWire.Type => ({
  defaultModel: models.defaultModel ?? null,
  models: models.models.map((model) => ({
    id: model.id,
    name: model.name,
    provider: model.provider,
    available: model.available,
    ...(model.unavailableReason === undefined ? {} : { unavailableReason: model.unavailableReason })
  }))
})

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * A failure once the stream began, as its last event: the documented string (and `reason`), as ErrorResponse.ts
 * would answer it; never a cause.
 */
const errorEvent = (error: unknown) =>
  isDocumentedError(error)
    ? sse("error", { error: error.message, ...error.details })
    : sse("error", { error: isUnavailable(error) ? "Service unavailable" : "Internal server error" })

/** The turn as server-sent events: each delta, then `done` with the whole reply; a failure ends it with `error`. */
const eventStream = (turn: AgentChatStream) =>
  turn.pipe(
    Stream.map((event) => event.type === "delta" ? sse("delta", { text: event.text }) : sse("done", replyWire(event.reply))),
    Stream.catchCause((cause) => {
      const failure = Cause.findErrorOption(cause)
      return Stream.fromEffect(
        (failure._tag === "Some" && isDocumentedError(failure.value) ? Effect.void : Effect.logError("Chat stream failed", cause)).pipe(
          Effect.as(errorEvent(failure._tag === "Some" ? failure.value : undefined))
        )
      )
    }),
    Stream.encodeText
  )

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const chat = yield* AgentChat
    const notFound = new Agent.AgentNotFound({ agentId: "" })
    const starting = new Agent.GatewayStarting({ agentId: "" })
    const notRunning = new AgentChats.AgentNotRunning({ agentId: "" })
    const failed = new AgentChats.AgentChatFailed({ agentId: "", reason: "<what the gateway said>" })

    yield* agentRoute("POST", "/v0/agents/:agentId/chat", {
      summary: "Send the agent a message and get its reply",
      description: `\`message\`: 1 to ${maxMessageLength} characters. \`sessionKey\`: the conversation to continue ` +
        "(a new one when absent; the answer names it). `model`: `provider/model`, the session's model from then on. " +
        "With `\"stream\": true` the answer is `text/event-stream`: `event: delta` `data: {\"text\"}` as the agent " +
        "writes, then `event: done` with the reply's JSON; `event: error` `data: {error}` if the turn fails after the " +
        "stream began. Each answered turn is recorded in the agent's events (`ChatAnswered`: session, model, lengths; " +
        "never the text).",
      body: { schema: ChatBody },
      response: { schema: ReplyWire },
      otherResponses: [{ status: 200, contentType: "text/event-stream", description: "With `stream: true`: the reply as server-sent events" }],
      errors: [notFound, notRunning, failed, new AgentChats.AgentDidNotAnswer({ agentId: "" }), starting]
    }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const input = yield* body(ChatBody)
        const request = {
          message: input.message,
          ...(input.sessionKey === undefined ? {} : { sessionKey: input.sessionKey }),
          ...(input.model === undefined ? {} : { model: input.model })
        }
        if (input.stream !== true) return replyWire(yield* chat.reply(principal, agentId, request))
        // The checks fail as a plain request does, before the stream begins.
        const turn = yield* chat.chat(principal, agentId, request)
        return HttpServerResponse.stream(eventStream(turn), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/chat/sessions", {
      summary: "The agent's chat sessions, most recently changed first",
      response: { schema: Schema.Struct({ sessions: Schema.Array(SessionWire) }) },
      errors: [notFound, notRunning, failed, starting]
    }, ({ principal, agentId }) => Effect.map(chat.sessions(principal, agentId), (sessions) => ({ sessions: sessions.map(sessionWire) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/chat/sessions/:sessionKey", {
      summary: "A chat session's messages, oldest first",
      description: `\`limit\`: the newest how many (${defaultHistoryLimit} by default, at most ${maxHistoryLimit}).`,
      query: Schema.Struct({ limit: Schema.optional(Schema.String) }),
      response: { schema: Schema.Struct({ sessionKey: Schema.String, messages: Schema.Array(MessageWire) }) },
      errors: [notFound, new AgentChats.ChatSessionMissing({ agentId: "", sessionKey: "" }), notRunning, failed, starting]
    }, ({ principal, agentId, params, request }) => {
      const sessionKey = params["sessionKey"] ?? ""
      return Effect.map(chat.history(principal, agentId, sessionKey, Kit.query(request, "limit")), (messages) => ({
        sessionKey,
        messages: messages.map(messageWire)
      }))
    })

    yield* agentRoute("GET", "/v0/agents/:agentId/models", {
      summary: "The models the agent can answer with, and its default",
      description: "`available`: whether the model can answer now (its provider has a credential); `unavailableReason` says why not (`missing-auth`).",
      response: { schema: ModelsWire },
      errors: [notFound, notRunning, failed, starting]
    }, ({ principal, agentId }) => Effect.map(chat.models(principal, agentId), modelsWire))
  })
)
