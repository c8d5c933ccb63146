/**
 * How the channel endpoints refuse (service interface, section 7: `Unsupported channel` 400, `Configuration failed`
 * and `Removal failed` 500; 403 for a paid feature on the free plan). A reason, when there is one, is for the
 * response's `reason` field and the log: it never quotes a token.
 */
import { Schema } from "effect"
import type { ValidationFailed } from "../ValidationFailed.ts"

/** A channel name outside telegram, slack, discord and whatsapp. */
export class UnsupportedChannel extends Schema.TaggedError<UnsupportedChannel>()("UnsupportedChannel", { channel: Schema.String }) {
  readonly status = 400
  override readonly message = "Unsupported channel"
}

/** A malformed token, an already enabled channel, or an engine that would not take the configuration. */
export class ConfigurationFailed extends Schema.TaggedError<ConfigurationFailed>()("ConfigurationFailed", {
  channel: Schema.String,
  reason: Schema.String
}) {
  readonly status = 500
  override readonly message = "Configuration failed"
  get details() {
    return { reason: this.reason }
  }
}

/** The engine could not drop the channel from the agent's gateway. */
export class RemovalFailed extends Schema.TaggedError<RemovalFailed>()("RemovalFailed", { channel: Schema.String }) {
  readonly status = 500
  override readonly message = "Removal failed"
}

/** Channels are a paid feature: the free plan has none. */
export class ChannelsNotOnPlan extends Schema.TaggedError<ChannelsNotOnPlan>()("ChannelsNotOnPlan", {}) {
  readonly status = 403
  override readonly message = "Channels are not available on the free plan"
}

export type ChannelError = ConfigurationFailed | ValidationFailed
