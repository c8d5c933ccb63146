/**
 * Messaging channels (Telegram, Slack, Discord, WhatsApp) of an agent: which are configured, their DM policy and
 * allow list, and their tokens, sealed (stream `channels-<agentId>`). The engine is told from this state at every
 * gateway start; the tokens reach the gateway only through its environment.
 */
import type { Result } from "effect"
import type { Decider } from "../Decider.ts"
import type { ChannelCommand, RemoveAllChannels } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { ChannelError } from "./Errors.ts"
import { ChannelEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type ChannelsState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"
export * from "./Validation.ts"

export const stream = (agentId: string) => `channels-${agentId}`

export const decider: Decider<ChannelCommand, ChannelEvent, ChannelsState, ChannelError> = { initial, decide, evolve, events: ChannelEvent }

/** The same stream as decided when its agent is deleted: that can never be refused (decided in the agent's delete). */
export const deletion: Decider<RemoveAllChannels, ChannelEvent, ChannelsState, never> = {
  initial,
  evolve,
  events: ChannelEvent,
  decide: (command, state) => decide(command, state) as Result.Result<ReadonlyArray<ChannelEvent>, never>
}

/** Named here too: sealing a token can fail for want of a master key, and services that do it must be declarable. */
export type { SecretsNotConfigured } from "../secrets/Errors.ts"
