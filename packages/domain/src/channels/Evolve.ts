/** Folds one channel event into the agent's channels. */
import { Match } from "effect"
import type { ChannelEvent } from "./Events.ts"
import type { ChannelsState } from "./State.ts"

export const evolve = (state: ChannelsState, event: ChannelEvent): ChannelsState =>
  Match.valueTags(event, {
    ChannelConfigured: (e): ChannelsState => ({ channels: new Map([...state.channels, [e.channel, e.settings]]) }),
    ChannelRemoved: (e): ChannelsState => ({ channels: new Map([...state.channels].filter(([name]) => name !== e.channel)) })
  })
