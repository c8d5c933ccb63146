/**
 * What is done to pair others with an agent's messaging channels (stream `pairings-<agentId>`): each DM pairing
 * request approved through Cairn, on which channel, for which sender, by whom (the event's actor); each WhatsApp
 * link begun through Cairn, and the phone's link once Cairn saw it made. For audit. The sender's messages are never
 * here, nor a QR code: only the id the channel knows a sender by. Stored: the schema only ever grows optional fields.
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

/** A WhatsApp login was begun (a QR code handed out to be scanned); `force` dropped the phone linked before. */
export class WhatsAppLinkStarted extends Schema.TaggedClass<WhatsAppLinkStarted>()("WhatsAppLinkStarted", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  force: Schema.Boolean,
  at: Schema.String
}) {}

/** A phone scanned the code: the agent's WhatsApp is linked to it (seen by Cairn at `at`). */
export class WhatsAppLinked extends Schema.TaggedClass<WhatsAppLinked>()("WhatsAppLinked", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const PairingEvent = Schema.Union([ChannelPairingApproved, WhatsAppLinkStarted, WhatsAppLinked])
export type PairingEvent = typeof PairingEvent.Type
