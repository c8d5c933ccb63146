/**
 * What can be asked of an agent's channels. The application checks shapes and formats and seals the tokens before
 * deciding (deciding stays pure); the decider knows what is configured and enabled.
 */
import { Schema } from "effect"
import { ChannelName, ChannelSettings, DmPolicy, SealedToken } from "./Events.ts"

/** Sets a channel up or changes it. Absent fields keep what is configured (defaults on a first setup). */
export class ConfigureChannel extends Schema.TaggedClass<ConfigureChannel>()("ConfigureChannel", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  channel: ChannelName,
  enabled: Schema.optionalKey(Schema.Boolean),
  dmPolicy: Schema.optionalKey(DmPolicy),
  allowFrom: Schema.optionalKey(Schema.Array(Schema.String)),
  botToken: Schema.optionalKey(SealedToken),
  appToken: Schema.optionalKey(SealedToken),
  at: Schema.String
}) {}

/** Puts back the settings from before a configuration the engine refused (none: the channel goes). */
export class RevertChannel extends Schema.TaggedClass<RevertChannel>()("RevertChannel", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  channel: ChannelName,
  previous: Schema.optionalKey(ChannelSettings),
  at: Schema.String
}) {}

export class RemoveChannel extends Schema.TaggedClass<RemoveChannel>()("RemoveChannel", {
  agentId: Schema.String,
  channel: ChannelName,
  at: Schema.String
}) {}

/** The agent is being deleted: every channel goes with it. */
export class RemoveAllChannels extends Schema.TaggedClass<RemoveAllChannels>()("RemoveAllChannels", {
  agentId: Schema.String,
  at: Schema.String
}) {}

export const ChannelCommand = Schema.Union([ConfigureChannel, RevertChannel, RemoveChannel, RemoveAllChannels])
export type ChannelCommand = typeof ChannelCommand.Type
