/**
 * What is done to the DM pairing requests of an agent's messaging channels (stream `pairings-<agentId>`): each
 * request approved through Cairn, on which channel, for which sender, by whom (the event's actor). For audit. The
 * sender's messages are never here: only the id the channel knows them by. Stored: the schema only ever grows
 * optional fields.
 */
import { Schema } from "effect"
import { ChannelName } from "../channels/Events.ts"

export class ChannelPairingApproved extends Schema.TaggedClass<ChannelPairingApproved>()("ChannelPairingApproved", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  channel: ChannelName,
  /** The sender the channel now lets write to the agent, as the channel names them (a Telegram user id, …). */
  senderId: Schema.String,
  at: Schema.String
}) {}

export const PairingEvent = Schema.Union([ChannelPairingApproved])
export type PairingEvent = typeof PairingEvent.Type
