/**
 * Talking to an agent through the API: one message in, the agent's reply out (streamed as its gateway writes it),
 * its chat sessions and their history, and the models it can answer with. Everything goes through the AgentEngine
 * port (EngineChat): the conversations are the gateway's, Cairn keeps none of their text. Each answered turn is
 * recorded for audit on the agent's chats stream (`chats-<agentId>`): who, which session and model, and the lengths
 * of the message and the reply. A gateway on its way up is waited for (503 GatewayStarting after ReadyWait); one
 * that is stopped or crashed is 409 `Agent is not running`; a turn longer than ChatTimeout is 504.
 */
import {
  AgentEngine,
  type AgentNotProvisioned,
  type ChatEvent,
  type ChatFailed,
  type ChatTimedOut,
  type ChatUnavailable,
  EngineChat
} from "@cairn/agent-engine"
import { type Agent, AgentChats, ValidationFailed } from "@cairn/domain"
import type { EventStoreUnavailable } from "@cairn/event-store"
import { Context, Duration, Effect, Layer, Result, Stream } from "effect"
import type { Principal } from "../Access.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { now } from "../Now.ts"
import { Agents } from "./Agents.ts"
import { validateModel } from "../gateway/AgentModel.ts"

/** How long a chat turn may take before it is answered 504 (CHAT_TIMEOUT; 120 seconds). */
export const ChatTimeout = Context.Reference<Duration.Input>("cairn/AgentChat/ChatTimeout", { defaultValue: () => "120 seconds" })

/** The longest message a chat takes, in characters. */
export const maxMessageLength = 100_000
/** How many messages of a session's history one read gives at most, and by default. */
export const maxHistoryLimit = 1000
export const defaultHistoryLimit = 100

/** How long past its timeout a turn the engine did not end is given before the request ends anyway. */
const backstopMs = 5_000

export interface ChatInput {
  readonly message: unknown
  readonly sessionKey?: unknown
  readonly model?: unknown
}

export interface ValidChat {
  readonly message: string
  readonly sessionKey?: string
  readonly model?: string
}

/** The rules of a chat request: a non-empty message of at most 100,000 characters, a session key and model as the engine takes them. */
export const validateChat = (input: ChatInput): Result.Result<ValidChat, ValidationFailed> => {
  const { message, sessionKey, model } = input
  if (typeof message !== "string" || message.trim() === "") {
    return Result.fail(new ValidationFailed({ detail: "message must be a non-empty string" }))
  }
  if (message.length > maxMessageLength) {
    return Result.fail(new ValidationFailed({ detail: `message must be at most ${maxMessageLength} characters` }))
  }
  if (sessionKey !== undefined && sessionKey !== null && !(typeof sessionKey === "string" && EngineChat.sessionKeyPattern.test(sessionKey))) {
    return Result.fail(new ValidationFailed({
      detail: "sessionKey must be 1 to 200 letters, digits or : . _ @ / - (starting with a letter or digit)"
    }))
  }
  const checkedModel = model === undefined || model === null ? Result.succeed(undefined) : validateModel(model)
  return Result.map(checkedModel, (validModel): ValidChat => ({
    message,
    ...(typeof sessionKey === "string" ? { sessionKey } : {}),
    ...(validModel === undefined ? {} : { model: validModel })
  }))
}

/** A history read's `limit` (a query's text): 100 when absent, a whole number from 1 to 1000. */
export const validateLimit = (limit: string | null): Result.Result<number, ValidationFailed> => {
  if (limit === null) return Result.succeed(defaultHistoryLimit)
  const count = Number(limit)
  return limit.trim() !== "" && Number.isInteger(count) && count >= 1 && count <= maxHistoryLimit
    ? Result.succeed(count)
    : Result.fail(new ValidationFailed({ detail: `limit must be a whole number from 1 to ${maxHistoryLimit}` }))
}

/** A turn's events as the application gives them: the engine's, its failures as documented errors. */
export type AgentChatStream = Stream.Stream<
  ChatEvent,
  AgentChats.AgentNotRunning | AgentChats.AgentDidNotAnswer | AgentChats.AgentChatFailed | EventStoreUnavailable
>

export class AgentChat extends Context.Service<AgentChat>()("cairn/AgentChat", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const agents = yield* Agents
    const gateway = yield* Gateway
    const timeoutMs = Duration.toMillis(Duration.fromInputUnsafe(yield* ChatTimeout))

    /** The agent's gateway, ready to talk: one on its way up waited for (503 if it is not up in time), then running (409). */
    const running = (agentId: string): Effect.Effect<void, Agent.GatewayStarting | AgentChats.AgentNotRunning> =>
      Effect.gen(function*() {
        yield* gateway.ready(agentId)
        if (!(yield* gateway.isRunning(agentId))) return yield* new AgentChats.AgentNotRunning({ agentId })
      })

    /** The agent in the caller's workspace (404 otherwise), with its gateway ready to talk. */
    const reachable = (principal: Principal, agentId: string) => Effect.andThen(agents.get(principal.workspaceId, agentId), running(agentId))

    /** An engine's chat failure as the documented error: the turn failed (502), took too long (504), or nothing runs (409). */
    const engineFailure = (agentId: string) => (error: ChatFailed | ChatTimedOut | ChatUnavailable | AgentNotProvisioned) => {
      switch (error._tag) {
        case "ChatFailed":
          return new AgentChats.AgentChatFailed({ agentId, reason: error.detail })
        case "ChatTimedOut":
          return new AgentChats.AgentDidNotAnswer({ agentId })
        case "ChatUnavailable":
        case "AgentNotProvisioned":
          return new AgentChats.AgentNotRunning({ agentId })
      }
    }

    /** Records an answered turn (stream `chats-<agentId>`, the agent's trail): its shape, never its text. */
    const record = (principal: Principal, agentId: string, message: string, done: Extract<ChatEvent, { type: "done" }>) =>
      Effect.flatMap(now, (at) =>
        commands.record(AgentChats.decider, AgentChats.stream(agentId), new AgentChats.RecordChat({
          agentId,
          workspaceId: principal.workspaceId,
          sessionKey: done.reply.sessionKey,
          model: done.reply.model,
          messageLength: message.length,
          replyLength: done.reply.reply.length,
          at
        }), { actor: principal.userId }))

    /**
     * One chat turn. The checks (agent, input, gateway) are made before the stream is given, so they fail as a plain
     * request does; the stream then carries the reply's deltas and its `done`, recorded for audit as it passes.
     */
    const chat = Effect.fn("AgentChat.chat")(function*(principal: Principal, agentId: string, input: ChatInput) {
      yield* agents.get(principal.workspaceId, agentId)
      const request = yield* Effect.fromResult(validateChat(input))
      yield* running(agentId)
      const turn: AgentChatStream = engine.chat(agentId, { ...request, timeoutMs }).pipe(
        Stream.mapError(engineFailure(agentId)),
        Stream.tap((event) => event.type === "done" ? record(principal, agentId, request.message, event) : Effect.void)
      )
      return turn
    })

    /**
     * A turn's whole reply, once its gateway finished it. The engine ends a turn at its timeout; should it not, the
     * request still ends a moment later.
     */
    const reply = (principal: Principal, agentId: string, input: ChatInput) =>
      Effect.flatMap(chat(principal, agentId, input), (turn) =>
        Stream.runFold(turn, (): EngineChat.ChatReply | undefined => undefined, (last, event) => event.type === "done" ? event.reply : last).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(timeoutMs + backstopMs),
            orElse: () => Effect.fail(new AgentChats.AgentDidNotAnswer({ agentId }))
          }),
          // A turn that ended without its `done` is one the gateway did not finish.
          Effect.flatMap((done) =>
            done === undefined
              ? Effect.fail(new AgentChats.AgentChatFailed({ agentId, reason: "the turn ended without a reply" }))
              : Effect.succeed(done))
        ))

    /** The agent's chat sessions, most recently changed first. */
    const sessions = (principal: Principal, agentId: string) =>
      reachable(principal, agentId).pipe(Effect.andThen(engine.chatSessions(agentId).pipe(Effect.mapError(engineFailure(agentId)))))

    /** A session's last `limit` messages (a query's text), oldest first; 404 for a session the gateway does not have. */
    const history = (principal: Principal, agentId: string, sessionKey: string, limit: string | null) =>
      Effect.gen(function*() {
        yield* agents.get(principal.workspaceId, agentId)
        const count = yield* Effect.fromResult(validateLimit(limit))
        // A key the engine could not have given is no session of the agent's.
        if (!EngineChat.sessionKeyPattern.test(sessionKey)) return yield* new AgentChats.ChatSessionMissing({ agentId, sessionKey })
        yield* running(agentId)
        return yield* engine.chatHistory(agentId, sessionKey, count).pipe(
          Effect.mapError((error) =>
            error._tag === "ChatSessionNotFound" ? new AgentChats.ChatSessionMissing({ agentId, sessionKey }) : engineFailure(agentId)(error))
        )
      })

    /** The models the agent's gateway offers, which can answer, and its default. */
    const models = (principal: Principal, agentId: string) =>
      reachable(principal, agentId).pipe(Effect.andThen(engine.listModels(agentId).pipe(Effect.mapError(engineFailure(agentId)))))

    return { chat, reply, sessions, history, models }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
