/**
 * Talking to an agent through its gateway: one message in, the agent's reply out (streamed as it is written), the
 * conversations (sessions) it keeps and their history, and the models it can answer with. The shapes are the port's;
 * OpenClaw's chat RPC (`chat.send` and its `chat` events, `chat.history`, `sessions.list`, `models.list`) and the
 * simulated engine both map onto them.
 */
import { Schema } from "effect"

/** A session key as the API takes one: what OpenClaw accepts, without spaces or control characters. */
export const sessionKeyPattern = /^[A-Za-z0-9][A-Za-z0-9:._@/-]{0,199}$/

/** A model as `provider/model` (`openai/gpt-5`, `fakellm/fake-1`). */
export const modelPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The model a runtime config names as the agents' default: `agents.defaults.model`, a string or `{primary}` (both
 * OpenClaw's forms); undefined where it names none (an empty name is none).
 */
export const configuredModel = (config: unknown): string | undefined => {
  const agents = isObject(config) ? config["agents"] : undefined
  const defaults = isObject(agents) ? agents["defaults"] : undefined
  const model = isObject(defaults) ? defaults["model"] : undefined
  const named = isObject(model) ? model["primary"] : model
  return typeof named === "string" && named !== "" ? named : undefined
}

export interface ChatRequest {
  readonly message: string
  /** The conversation to continue; a new one when absent. */
  readonly sessionKey?: string
  /** The model the session answers with from now on (`provider/model`), when given. */
  readonly model?: string
  /** How long the whole turn may take before ChatTimedOut. */
  readonly timeoutMs: number
}

/** Tokens the turn used, as the engine reports them. */
export interface ChatUsage {
  readonly inputTokens?: number
  readonly outputTokens?: number
  readonly totalTokens?: number
}

export interface ChatReply {
  readonly reply: string
  readonly sessionKey: string
  /** The model that answered (`provider/model`), or the agent's default when the engine does not say. */
  readonly model: string
  readonly usage?: ChatUsage
}

/** What a turn streams: text as the agent writes it, then the whole reply once. */
export type ChatEvent =
  | { readonly type: "delta"; readonly text: string }
  | { readonly type: "done"; readonly reply: ChatReply }

export interface ChatSession {
  readonly sessionKey: string
  /** The session's label or title, when it has one. */
  readonly title?: string
  /** When it last changed (ISO 8601), when the engine says. */
  readonly updatedAt?: string
  readonly model?: string
}

export interface ChatMessage {
  readonly role: "user" | "assistant" | "system" | "tool"
  readonly text: string
  /** When it was written (ISO 8601), when the engine says. */
  readonly at?: string
}

/** A model the agent's gateway offers, and whether it has what it needs to answer (a credential, a provider). */
export interface EngineModel {
  /** `provider/model` */
  readonly id: string
  readonly name: string
  readonly provider: string
  readonly available: boolean
  /** Why it cannot answer, when it cannot (`missing-auth`, …). */
  readonly unavailableReason?: string
}

export interface EngineModels {
  /** The model the agent answers with when a chat names none. */
  readonly defaultModel: string | undefined
  readonly models: ReadonlyArray<EngineModel>
}

/** The gateway took the turn but it failed (the model refused, errored, or the run was aborted). */
export class ChatFailed extends Schema.TaggedError<ChatFailed>()("ChatFailed", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Chat with agent ${this.agentId} failed: ${this.detail}`
  }
}

/** The gateway did not finish the turn in time. */
export class ChatTimedOut extends Schema.TaggedError<ChatTimedOut>()("ChatTimedOut", {
  agentId: Schema.String,
  timeoutMs: Schema.Number
}) {
  override get message() {
    return `Agent ${this.agentId} did not answer within ${this.timeoutMs} ms`
  }
}

/** The agent's gateway is not running, so nothing can answer. */
export class ChatUnavailable extends Schema.TaggedError<ChatUnavailable>()("ChatUnavailable", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Agent ${this.agentId} cannot chat: ${this.detail}`
  }
}

/** The agent has no session with this key. */
export class ChatSessionNotFound extends Schema.TaggedError<ChatSessionNotFound>()("ChatSessionNotFound", {
  agentId: Schema.String,
  sessionKey: Schema.String
}) {
  override get message() {
    return `Agent ${this.agentId} has no chat session ${this.sessionKey}`
  }
}
