/**
 * What an agent's gateway gets of its channels at each start: the channels as the engine should run them, and their
 * tokens, opened from the vault, as environment variables (`EngineChannels.tokenVariable`; they go under the
 * agent's secrets, over any secret of the same name). Its own module so that the supervisor, which delivers it with
 * the secrets, does not depend on the Channels service.
 */
import { type ChannelSpec, EngineChannels } from "@cairn/agent-engine"
import { Channel } from "@cairn/domain"
import { Effect, type Redacted } from "effect"
import type { CommandHandler } from "../CommandHandler.ts"
import type { SecretVault } from "../secrets/SecretVault.ts"

export interface ChannelDelivery {
  readonly specs: ReadonlyArray<ChannelSpec>
  readonly environment: Readonly<Record<string, Redacted.Redacted<string>>>
}

/** A channel token's sealing is used once: it is always version 1 of its sealing id. */
export const tokenVersion = 1

/** The specs and opened tokens of the channels `state` holds. A token that does not open fails the delivery. */
export const fromState = (vault: SecretVault["Service"], workspaceId: string, state: Channel.ChannelsState) =>
  Effect.gen(function*() {
    const specs: Array<ChannelSpec> = []
    const environment: Record<string, Redacted.Redacted<string>> = {}
    for (const [channel, settings] of state.channels) {
      const tokens: Array<Channel.TokenKind> = []
      for (const kind of Channel.tokenKinds[channel]) {
        const token = settings[kind]
        if (token === undefined) continue
        environment[EngineChannels.tokenVariable(channel, kind)] = yield* vault.open(workspaceId, token.sealingId, tokenVersion, token.sealed)
        tokens.push(kind)
      }
      specs.push({ channel, enabled: settings.enabled, dmPolicy: settings.dmPolicy, allowFrom: settings.allowFrom, tokens })
    }
    return { specs, environment } satisfies ChannelDelivery
  })

/** The agent's channels as they are now, for its gateway's next start. */
export const deliveryFor = (commands: CommandHandler["Service"], vault: SecretVault["Service"], agentId: string, workspaceId: string) =>
  Effect.flatMap(commands.load(Channel.decider, Channel.stream(agentId)), ({ state }) => fromState(vault, workspaceId, state))
