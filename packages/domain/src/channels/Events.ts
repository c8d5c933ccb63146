/**
 * What happens to an agent's messaging channels (stream `channels-<agentId>`). A token is never in an event: only
 * its ciphertext, sealed under the workspace's data key for a random sealing id (the associated data binds it to
 * the workspace and that id), and a hint of at most its last four characters. Each event carries a channel's whole
 * settings, so a state is the last event per channel.
 */
import { Schema } from "effect"
import { Sealed } from "../secrets/Events.ts"

export const channelNames = ["telegram", "slack", "discord", "whatsapp"] as const
export const ChannelName = Schema.Literals(channelNames)
export type ChannelName = typeof ChannelName.Type

export const DmPolicy = Schema.Literals(["open", "pairing"])
export type DmPolicy = typeof DmPolicy.Type

export const TokenKind = Schema.Literals(["botToken", "appToken"])
export type TokenKind = typeof TokenKind.Type

/** A token as Cairn keeps it: sealed, with the id it was sealed for and what may be shown of it. */
export const SealedToken = Schema.Struct({
  sealingId: Schema.String,
  sealed: Sealed,
  /** At most the last four characters; absent for a token too short to show any of it safely. */
  hint: Schema.optionalKey(Schema.String)
})
export type SealedToken = typeof SealedToken.Type

export const ChannelSettings = Schema.Struct({
  enabled: Schema.Boolean,
  dmPolicy: DmPolicy,
  allowFrom: Schema.Array(Schema.String),
  botToken: Schema.optionalKey(SealedToken),
  appToken: Schema.optionalKey(SealedToken)
})
export type ChannelSettings = typeof ChannelSettings.Type

export class ChannelConfigured extends Schema.TaggedClass<ChannelConfigured>()("ChannelConfigured", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  channel: ChannelName,
  settings: ChannelSettings,
  /** `revert`: the engine refused the configuration just recorded, and these are the settings from before it. */
  reason: Schema.optionalKey(Schema.Literals(["revert"])),
  at: Schema.String
}) {}

export const RemovalReason = Schema.Literals(["user", "revert", "agent-deleted"])
export type RemovalReason = typeof RemovalReason.Type

/** The channel's settings and its sealed tokens are gone from the state and the read model. */
export class ChannelRemoved extends Schema.TaggedClass<ChannelRemoved>()("ChannelRemoved", {
  agentId: Schema.String,
  channel: ChannelName,
  reason: RemovalReason,
  at: Schema.String
}) {}

export const ChannelEvent = Schema.Union([ChannelConfigured, ChannelRemoved])
export type ChannelEvent = typeof ChannelEvent.Type
