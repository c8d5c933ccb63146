/** An agent's channels as their events leave them: each configured channel's current settings. */
import type { ChannelName, ChannelSettings } from "./Events.ts"

export interface ChannelsState {
  readonly channels: ReadonlyMap<ChannelName, ChannelSettings>
}

export const initial: ChannelsState = { channels: new Map() }
