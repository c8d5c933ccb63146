/**
 * Messaging channels on the AgentEngine port: what the control plane tells the engine about an agent's channels,
 * and what the engine reports back. Tokens never pass through these operations: the engine's config refers to
 * environment variables (`tokenVariable`), and the tokens reach the gateway with the rest of its environment
 * (`setEnvironment`), so no token is ever written to the agent's disk.
 */
import type { Channel } from "@cairn/domain"
import { Schema } from "effect"

/** A channel as the engine should run it from the gateway's next start on. */
export interface ChannelSpec {
  readonly channel: Channel.ChannelName
  readonly enabled: boolean
  readonly dmPolicy: Channel.DmPolicy
  readonly allowFrom: ReadonlyArray<string>
  /** The tokens the control plane delivers in the environment, under `tokenVariable(channel, kind)`. */
  readonly tokens: ReadonlyArray<Channel.TokenKind>
}

/**
 * The environment variable a channel token reaches the gateway in: `CHANNEL_TELEGRAM_BOT_TOKEN` and the like. Not
 * OpenClaw's own fallback names (`TELEGRAM_BOT_TOKEN`, …, features §10): with those, a token left in the
 * environment would keep a removed channel running, since OpenClaw takes them without any config.
 */
export const tokenVariable = (channel: Channel.ChannelName, kind: Channel.TokenKind): string =>
  `CHANNEL_${channel.toUpperCase()}_${kind === "botToken" ? "BOT" : "APP"}_TOKEN`

/** A channel as the engine reports it. */
export interface ChannelStatus {
  readonly channel: Channel.ChannelName
  /** In the engine's config. */
  readonly configured: boolean
  /** Its transport runs in the gateway now (false with the gateway stopped). */
  readonly running: boolean
  /** Whether the gateway has each configured token (`available`), else the engine's word for it. */
  readonly tokenStatus?: string
  /** WhatsApp: linked to a phone inside the agent. */
  readonly linked?: boolean
  /** The engine's last error for the channel, for logs (it can be long; it never holds a token). */
  readonly lastError?: string
}

/** A sender waiting for the owner to approve them on a channel whose DM policy is `pairing`. */
export interface ChannelPairingRequest {
  /** What the channel sent the sender, and the owner approves (upper case). */
  readonly code: string
  /** The sender as the channel names them (a Telegram user id, a Slack member id, …). */
  readonly senderId: string
  /** When the sender first asked (ISO 8601). */
  readonly createdAt: string
  /** When the engine forgets the request unless it is approved (ISO 8601), where the engine says. */
  readonly expiresAt?: string
}

/** No pending request of the agent's channel has this code (never sent, approved already, or expired). */
export class UnknownPairingCode extends Schema.TaggedError<UnknownPairingCode>()("UnknownPairingCode", {
  agentId: Schema.String,
  channel: Schema.String
}) {
  override get message() {
    return `The ${this.channel} channel of agent ${this.agentId} has no pending pairing request with that code`
  }
}

/** The engine could not write or read an agent's channel configuration. */
export class ChannelsUnavailable extends Schema.TaggedError<ChannelsUnavailable>()("ChannelsUnavailable", {
  agentId: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Channels of agent ${this.agentId}: ${this.detail}`
  }
}

/**
 * Where linking the agent's WhatsApp to a phone stands (OpenClaw's QR login, `web.login.*`): `waiting` for the QR
 * code to be scanned in WhatsApp → Linked Devices (the code refreshes while it waits), `linked`, `not_started` (no
 * login in progress and no phone linked), `expired` (the login was not finished in time), `failed` (the engine
 * could not get a code from WhatsApp, or the phone's login failed).
 */
export type WhatsAppLinkStatus = "waiting" | "linked" | "not_started" | "expired" | "failed"

export interface WhatsAppLink {
  readonly status: WhatsAppLinkStatus
  /** The engine's words for it. */
  readonly message: string
  /** While `waiting`: the code to scan, as a PNG data URL (`data:image/png;base64,…`). */
  readonly qrDataUrl?: string
}
