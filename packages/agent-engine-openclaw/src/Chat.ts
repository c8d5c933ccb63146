/**
 * Chat with an OpenClaw gateway over its WebSocket RPC, on the connection Cairn keeps open to it (GatewayRpc.ts):
 *
 * - a turn is `chat.send {sessionKey, message, idempotencyKey}` → `{runId, status: "started"}`, then `chat` events
 *   of that run: `delta` (`deltaText`; `replace` when it is the whole text so far), and one of `final` (the assistant
 *   message, with its provider, model and usage), `error` (`errorMessage`, `errorKind`) or `aborted`. Events may
 *   arrive before the answer to `chat.send`, so they are kept until the run's id is known;
 * - a model for the session is `sessions.patch {key, model}` before the turn;
 * - a turn that runs too long, or whose stream is dropped, is aborted (`chat.abort {sessionKey, runId}`);
 * - sessions are `sessions.list`, a session's messages `chat.history {sessionKey, limit}`, models `models.list`.
 */
import {
  ChatFailed,
  type ChatEvent,
  type ChatMessage,
  type ChatReply,
  type ChatRequest,
  type ChatSession,
  ChatSessionNotFound,
  ChatTimedOut,
  type ChatUsage,
  type EngineModel,
  type EngineModels
} from "@cairn/agent-engine"
import { Cause, Effect, Queue, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { closedEvent, type GatewayClient, GatewayRpcError } from "./GatewayRpc.ts"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string | undefined => typeof value === "string" && value.length > 0 ? value : undefined
const count = (value: unknown): number | undefined => typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined

/** A message's text: a string content, or its text parts joined. */
export const messageText = (message: unknown): string => {
  if (!isRecord(message)) return ""
  const content = message["content"]
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return typeof message["text"] === "string" ? message["text"] : ""
  return content
    .filter((part): part is Record<string, unknown> => isRecord(part) && part["type"] === "text" && typeof part["text"] === "string")
    .map((part) => part["text"] as string)
    .join("")
}

/** Token counts under the names OpenClaw (and the providers it passes on) use. */
export const usageOf = (usage: unknown): ChatUsage | undefined => {
  if (!isRecord(usage)) return undefined
  const inputTokens = count(usage["input"] ?? usage["inputTokens"] ?? usage["prompt_tokens"])
  const outputTokens = count(usage["output"] ?? usage["outputTokens"] ?? usage["completion_tokens"])
  const totalTokens = count(usage["totalTokens"] ?? usage["total"] ?? usage["total_tokens"]) ??
    (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined)
  if (inputTokens === undefined && outputTokens === undefined && totalTokens === undefined) return undefined
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(totalTokens === undefined ? {} : { totalTokens })
  }
}

/** `provider/model` of an assistant message, when it says. */
const modelOf = (message: unknown): string | undefined => {
  if (!isRecord(message)) return undefined
  const model = text(message["model"])
  const provider = text(message["provider"])
  if (model === undefined) return undefined
  return provider === undefined || model.startsWith(`${provider}/`) ? model : `${provider}/${model}`
}

const rpcFailure = (agentId: string, method: string) => (cause: unknown) =>
  new ChatFailed({ agentId, detail: `${method}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** A new session's key: the API's own prefix, so its sessions are told from the Control UI's and channels'. */
export const newSessionKey = () => `api-${randomUUID()}`

/**
 * One turn on an open connection, as a stream of the port's chat events. `fallbackModel` names the model when
 * neither the final message nor the request does (the agent's default).
 */
export const turn = (
  client: GatewayClient,
  agentId: string,
  request: ChatRequest,
  fallbackModel: () => Promise<string | undefined>
): Stream.Stream<ChatEvent, ChatFailed | ChatTimedOut> =>
  Stream.callback<ChatEvent, ChatFailed | ChatTimedOut>((queue) =>
    Effect.gen(function*() {
      const sessionKey = request.sessionKey ?? newSessionKey()
      const idempotencyKey = randomUUID()
      let runId: string | undefined
      /** The turn ended (a reply, a failure): nothing more goes into the queue. */
      let ended = false
      /** The gateway is still working on it: the stream's end must abort the run. */
      let running = true
      let written = ""
      /** Usage a delta reported, for a final event without any (OpenClaw 2026.9 sends none on either, mostly). */
      let lastUsage: ChatUsage | undefined
      const early: Array<Record<string, unknown>> = []

      const fail = (error: ChatFailed | ChatTimedOut, gatewayDone: boolean) => {
        if (ended) return
        ended = true
        if (gatewayDone) running = false
        Queue.failCauseUnsafe(queue, Cause.fail(error))
      }

      const finish = (payload: Record<string, unknown>) => {
        ended = true
        running = false
        const message = payload["message"]
        const reply = messageText(message) || written
        const usage = usageOf(payload["usage"]) ?? (isRecord(message) ? usageOf(message["usage"]) : undefined) ?? lastUsage
        const done = (model: string | undefined) => {
          const result: ChatReply = {
            reply,
            sessionKey: text(payload["sessionKey"]) ?? sessionKey,
            model: model ?? "unknown",
            ...(usage === undefined ? {} : { usage })
          }
          Queue.offerUnsafe(queue, { type: "done", reply: result })
          Queue.endUnsafe(queue)
        }
        // The model the final message names, else the one this turn asked for, else the agent's default.
        const model = modelOf(message) ?? request.model
        if (model !== undefined) done(model)
        else fallbackModel().then(done, () => done(undefined))
      }

      const handle = (payload: Record<string, unknown>) => {
        if (ended) return
        switch (payload["state"]) {
          case "delta": {
            const delta = typeof payload["deltaText"] === "string" ? payload["deltaText"] : ""
            lastUsage = usageOf(payload["usage"]) ?? lastUsage
            // A `replace` delta is the whole text so far: what is new is its part after what was already streamed.
            const next = payload["replace"] === true ? delta : written + delta
            const added = next.startsWith(written) ? next.slice(written.length) : ""
            written = next
            if (added.length > 0) Queue.offerUnsafe(queue, { type: "delta", text: added })
            return
          }
          case "final":
            return finish(payload)
          case "error": {
            const kind = text(payload["errorKind"])
            const detail = text(payload["errorMessage"]) ?? "the turn failed"
            return fail(new ChatFailed({ agentId, detail: kind === undefined ? detail : `${detail} (${kind})` }), true)
          }
          case "aborted":
            return fail(new ChatFailed({ agentId, detail: text(payload["errorMessage"]) ?? "the turn was aborted" }), true)
        }
      }

      const unsubscribe = client.onEvent((event, payload) => {
        if (event === closedEvent) {
          const detail = payload instanceof Error ? payload.message : String(payload)
          return fail(new ChatFailed({ agentId, detail: `the gateway connection closed: ${detail}` }), true)
        }
        if (event !== "chat" || !isRecord(payload)) return
        if (runId === undefined) early.push(payload)
        else if (payload["runId"] === runId) handle(payload)
      })
      const timer = setTimeout(() => fail(new ChatTimedOut({ agentId, timeoutMs: request.timeoutMs }), false), request.timeoutMs)
      // A turn dropped (the client went away) or timed out is aborted: the gateway stops instead of answering nobody.
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          clearTimeout(timer)
          unsubscribe()
          if (!running) return Effect.void
          const abort = { sessionKey, ...(runId === undefined ? {} : { runId }) }
          return Effect.promise(() => client.request("chat.abort", abort, { timeoutMs: 5_000 }).catch(() => undefined))
        })
      )

      if (request.model !== undefined) {
        yield* Effect.tryPromise({
          try: () => client.request("sessions.patch", { key: sessionKey, model: request.model }),
          catch: rpcFailure(agentId, "sessions.patch")
        }).pipe(Effect.tapError(() => Effect.sync(() => void (running = false))))
      }
      const started = yield* Effect.tryPromise({
        try: () => client.request("chat.send", { sessionKey, message: request.message, idempotencyKey }, { timeoutMs: request.timeoutMs }),
        catch: (cause) =>
          cause instanceof GatewayRpcError && cause.code === "TIMEOUT"
            ? new ChatTimedOut({ agentId, timeoutMs: request.timeoutMs })
            : rpcFailure(agentId, "chat.send")(cause)
      })
      runId = isRecord(started) && typeof started["runId"] === "string" ? started["runId"] : idempotencyKey
      for (const payload of early.splice(0)) if (payload["runId"] === runId) handle(payload)
    })
  )

/** The session's key as the gateway lists it: sessions carry `key`. */
const sessionOf = (raw: unknown): ChatSession | undefined => {
  if (!isRecord(raw)) return undefined
  const sessionKey = text(raw["key"]) ?? text(raw["sessionKey"])
  if (sessionKey === undefined) return undefined
  const title = text(raw["label"]) ?? text(raw["displayName"]) ?? text(raw["title"])
  const updated = count(raw["updatedAt"])
  const provider = text(raw["modelProvider"])
  const model = text(raw["model"])
  return {
    sessionKey,
    ...(title === undefined ? {} : { title }),
    ...(updated === undefined ? {} : { updatedAt: new Date(updated).toISOString() }),
    ...(model === undefined ? {} : { model: provider === undefined || model.includes("/") ? model : `${provider}/${model}` })
  }
}

/** The gateway's sessions, most recently changed first. */
export const sessions = (client: GatewayClient, agentId: string) =>
  Effect.tryPromise({ try: () => client.request("sessions.list", {}), catch: rpcFailure(agentId, "sessions.list") }).pipe(
    Effect.map((answer): ReadonlyArray<ChatSession> => {
      const list = isRecord(answer) && Array.isArray(answer["sessions"]) ? answer["sessions"] : []
      return list.flatMap((raw) => sessionOf(raw) ?? []).sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""))
    })
  )

const roles = new Set<ChatMessage["role"]>(["user", "assistant", "system", "tool"])

const historyMessage = (raw: unknown): ChatMessage | undefined => {
  if (!isRecord(raw)) return undefined
  const role = raw["role"] === "toolResult" ? "tool" : raw["role"]
  if (typeof role !== "string" || !roles.has(role as ChatMessage["role"])) return undefined
  const at = count(raw["timestamp"]) ?? count(raw["ts"])
  return { role: role as ChatMessage["role"], text: messageText(raw), ...(at === undefined ? {} : { at: new Date(at).toISOString() }) }
}

/** A session's messages, oldest first, the newest `limit`; a key the gateway has no session for is not found. */
export const history = (client: GatewayClient, agentId: string, sessionKey: string, limit: number) =>
  Effect.gen(function*() {
    const known = yield* sessions(client, agentId)
    if (!known.some((session) => session.sessionKey === sessionKey || session.sessionKey.endsWith(`:${sessionKey}`))) {
      return yield* new ChatSessionNotFound({ agentId, sessionKey })
    }
    const answer = yield* Effect.tryPromise({
      try: () => client.request("chat.history", { sessionKey, limit }),
      catch: rpcFailure(agentId, "chat.history")
    })
    const list = isRecord(answer) && Array.isArray(answer["messages"]) ? answer["messages"] : []
    return list.flatMap((raw) => historyMessage(raw) ?? []).slice(-limit)
  })

/** The models the gateway offers; `defaultModel` is the agent's configured primary model. */
export const models = (client: GatewayClient, agentId: string, defaultModel: string | undefined) =>
  Effect.tryPromise({ try: () => client.request("models.list", {}), catch: rpcFailure(agentId, "models.list") }).pipe(
    Effect.map((answer): EngineModels => {
      const list = isRecord(answer) && Array.isArray(answer["models"]) ? answer["models"] : []
      const models = list.flatMap((raw): Array<EngineModel> => {
        if (!isRecord(raw)) return []
        const id = text(raw["id"])
        const provider = text(raw["provider"])
        if (id === undefined || provider === undefined) return []
        const reason = text(raw["unavailableReason"])
        return [{
          id: id.startsWith(`${provider}/`) ? id : `${provider}/${id}`,
          name: text(raw["name"]) ?? id,
          provider,
          available: raw["available"] !== false && reason === undefined,
          ...(reason === undefined ? {} : { unavailableReason: reason })
        }]
      })
      return { defaultModel, models }
    })
  )
