/**
 * Chatting with an agent through the API: each turn its gateway answered, recorded for audit (who, which session and
 * model, how long the message and reply were; never their text). Stream `chats-<agentId>`, part of the agent's audit
 * trail (agents/AuditStreams.ts), so that the agent's own stream does not grow with each message. The conversations
 * themselves are the gateway's: Cairn asks it.
 */
import type { Decider } from "../Decider.ts"
import type { ChatCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import { ChatEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type ChatState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (agentId: string) => `chats-${agentId}`

export const decider: Decider<ChatCommand, ChatEvent, ChatState, never> = { initial, decide, evolve, events: ChatEvent }
