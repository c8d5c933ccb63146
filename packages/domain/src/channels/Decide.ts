/**
 * Decides a channel command. A first setup needs every token its channel takes (400); an enabled channel takes no
 * new configuration (500 `Configuration failed`, as the spec says) except one that disables it: `enabled:false`,
 * with any other changes in the same request. A disabled channel can be reconfigured freely; `enabled` defaults to
 * true. Removing a channel that is not configured records nothing. Pure and total.
 */
import { Match, Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import type { ChannelCommand } from "./Commands.ts"
import { type ChannelError, ConfigurationFailed } from "./Errors.ts"
import { ChannelConfigured, type ChannelEvent, ChannelRemoved, type ChannelSettings } from "./Events.ts"
import type { ChannelsState } from "./State.ts"
import { tokenKinds } from "./Validation.ts"

export type Decision = Result.Result<ReadonlyArray<ChannelEvent>, ChannelError>

export const decide = (command: ChannelCommand, state: ChannelsState): Decision =>
  Match.valueTags(command, {
    ConfigureChannel: ({ agentId, workspaceId, channel, at, ...change }): Decision => {
      const current = state.channels.get(channel)
      if (current?.enabled === true && change.enabled !== false) {
        return Result.fail(new ConfigurationFailed({ channel, reason: `${channel} is already enabled: disable it (enabled:false) or remove it first` }))
      }
      if (current === undefined) {
        for (const kind of tokenKinds[channel]) {
          if (change[kind] === undefined) {
            return Result.fail(new ValidationFailed({
              detail: kind === "botToken" ? `botToken is required on initial setup of ${channel}` : `appToken is required for ${channel}`
            }))
          }
        }
      }
      const botToken = change.botToken ?? current?.botToken
      const appToken = change.appToken ?? current?.appToken
      const settings: ChannelSettings = {
        enabled: change.enabled ?? true,
        dmPolicy: change.dmPolicy ?? current?.dmPolicy ?? "open",
        allowFrom: change.allowFrom ?? current?.allowFrom ?? [],
        ...(botToken === undefined ? {} : { botToken }),
        ...(appToken === undefined ? {} : { appToken })
      }
      return Result.succeed([new ChannelConfigured({ agentId, workspaceId, channel, settings, at })])
    },
    RevertChannel: ({ agentId, workspaceId, channel, previous, at }): Decision =>
      Result.succeed(
        previous !== undefined
          ? [new ChannelConfigured({ agentId, workspaceId, channel, settings: previous, reason: "revert", at })]
          : state.channels.has(channel) ? [new ChannelRemoved({ agentId, channel, reason: "revert", at })] : []
      ),
    RemoveChannel: ({ agentId, channel, at }): Decision =>
      Result.succeed(state.channels.has(channel) ? [new ChannelRemoved({ agentId, channel, reason: "user", at })] : []),
    RemoveAllChannels: ({ agentId, at }): Decision =>
      Result.succeed([...state.channels.keys()].map((channel) => new ChannelRemoved({ agentId, channel, reason: "agent-deleted", at })))
  })
