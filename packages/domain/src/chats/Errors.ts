/**
 * Why a chat with an agent was refused or failed, each with its status and exact string. The conversation itself is
 * the agent's gateway's; these say what Cairn could not get from it. Their tags differ from the engine's errors
 * (EngineChat's ChatFailed, ChatTimedOut, ChatSessionNotFound), which the application maps onto them.
 */
import { Schema } from "effect"

/** The agent exists but its gateway is stopped or crashed: nothing can answer until it is started again. */
export class AgentNotRunning extends Schema.TaggedError<AgentNotRunning>()("AgentNotRunning", { agentId: Schema.String }) {
  readonly status = 409
  override readonly message = "Agent is not running"
}

/** The gateway did not finish the turn within CHAT_TIMEOUT. */
export class AgentDidNotAnswer extends Schema.TaggedError<AgentDidNotAnswer>()("AgentDidNotAnswer", { agentId: Schema.String }) {
  readonly status = 504
  override readonly message = "Agent did not answer in time"
}

/** The gateway took the turn but it failed (the model refused or errored, the run was aborted); `reason` says how. */
export class AgentChatFailed extends Schema.TaggedError<AgentChatFailed>()("AgentChatFailed", { agentId: Schema.String, reason: Schema.String }) {
  readonly status = 502
  override readonly message = "Chat failed"
  get details() {
    return { reason: this.reason }
  }
}

/** The agent's gateway has no chat session with this key. */
export class ChatSessionMissing extends Schema.TaggedError<ChatSessionMissing>()("ChatSessionMissing", {
  agentId: Schema.String,
  sessionKey: Schema.String
}) {
  readonly status = 404
  override readonly message = "Chat session not found"
}

export type ChatError = AgentNotRunning | AgentDidNotAnswer | AgentChatFailed | ChatSessionMissing
