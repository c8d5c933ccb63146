/**
 * How the channel pairing endpoints refuse. A channel that could hold no pairing request is 409 with what is wrong
 * with it; a code the channel does not hold (never sent, approved already, or expired: OpenClaw keeps a request an
 * hour) is 404. A WhatsApp link the engine could not begin is 502.
 */
import { Schema } from "effect"

/** No pending request of the channel has this code. */
export class PairingRequestNotFound extends Schema.TaggedError<PairingRequestNotFound>()("PairingRequestNotFound", {
  channel: Schema.String
}) {
  readonly status = 404
  override readonly message = "Pairing request not found"
}

/** The agent has no such channel configured: nobody can have asked to pair on it. */
export class ChannelNotConfigured extends Schema.TaggedError<ChannelNotConfigured>()("ChannelNotConfigured", {
  channel: Schema.String
}) {
  readonly status = 409
  override readonly message = "Channel is not configured"
}

/** The channel is configured but disabled: its gateway does not run it. */
export class ChannelDisabled extends Schema.TaggedError<ChannelDisabled>()("ChannelDisabled", {
  channel: Schema.String
}) {
  readonly status = 409
  override readonly message = "Channel is disabled"
}

/** The channel lets anyone write (`dmPolicy: "open"`): it sends no codes, so there is nothing to approve. */
export class ChannelNotPairing extends Schema.TaggedError<ChannelNotPairing>()("ChannelNotPairing", {
  channel: Schema.String
}) {
  readonly status = 409
  override readonly message = "Channel does not use pairing (its dmPolicy is open)"
}

/**
 * The engine could not link the agent's WhatsApp: no code came from WhatsApp (unreachable from the agent, say), or
 * the engine's QR login refused. The engine's reason is in `details`.
 */
export class WhatsAppLinkFailed extends Schema.TaggedError<WhatsAppLinkFailed>()("WhatsAppLinkFailed", {
  reason: Schema.String
}) {
  readonly status = 502
  override readonly message = "WhatsApp link failed"
  get details() {
    return { reason: this.reason }
  }
}
