/**
 * An agent's messaging channels: every channel's state (`GET …/channels`), configure one (`POST …/channels/{channel}`
 * `{botToken?, appToken?, dmPolicy?, allowFrom?, enabled?}`, an empty body allowed) and remove one (`DELETE`). The
 * channel name is checked before the body, so an unknown channel is `Unsupported channel` whatever was sent. DM
 * pairing: the senders waiting for approval on a channel in pairing mode (`GET …/channels/{channel}/pairing`), and
 * approve one by the code the channel sent them (`POST …/pairing/{code}/approve`). WhatsApp is linked to a phone by
 * a QR code (`POST …/channels/whatsapp/link`, then `GET` it until `linked`).
 */
import { AgentsAt, Channels } from "@cairn/application"
import { Agent, AgentChats, Channel, ChannelPairing, Secret, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { atDescription, AtQuery } from "./At.ts"
import * as Kit from "./Kit.ts"

/** What every channel shows: whether it is configured and enabled, its DM policy and allow list. */
const common = {
  configured: Schema.Boolean,
  enabled: Schema.Boolean,
  dmPolicy: Schema.NullOr(Channel.DmPolicy),
  allowFrom: Schema.Array(Schema.String)
}
/** A token only as whether it is set and its hint (its last characters), never its value. */
const botToken = { botTokenSet: Schema.Boolean, botTokenHint: Schema.NullOr(Schema.String) }
const ChannelsWire = Schema.Struct({
  telegram: Schema.Struct({ ...common, ...botToken }),
  slack: Schema.Struct({ ...common, ...botToken, appTokenSet: Schema.Boolean, appTokenHint: Schema.NullOr(Schema.String) }),
  discord: Schema.Struct({ ...common, ...botToken }),
  whatsapp: Schema.Struct({ ...common, linked: Schema.Boolean })
})

/** A sender waiting for approval: the code the channel sent them, who they are to the channel, when they asked. */
const PairingRequestWire = Schema.Struct({
  code: Schema.String,
  senderId: Schema.String,
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String)
})
const PairingListWire = Schema.Struct({ channel: Channel.ChannelName, requests: Schema.Array(PairingRequestWire) })

const LinkBody = Schema.Struct({ force: Schema.optional(Schema.Boolean) })
/** Where a WhatsApp link stands, with its QR code while it waits for a phone. */
const WhatsAppLinkWire = Schema.Struct({
  status: Schema.Literals(["waiting", "linked", "not_started", "expired"]),
  message: Schema.String,
  qr: Schema.NullOr(Schema.String),
  qrDataUrl: Schema.NullOr(Schema.String)
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const channels = yield* Channels
    const agentsAt = yield* AgentsAt

    yield* agentRoute("GET", "/v0/agents/:agentId/channels", { summary: "Every messaging channel's state (or as it was: `?at=`; `linked` is then false, the engine's to say)", description: atDescription, query: AtQuery, response: { schema: ChannelsWire }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, ({ principal, agentId, request }) => {
      const at = Kit.query(request, "at")
      return at === null
        ? Effect.map(channels.list(principal, agentId), (view): typeof ChannelsWire.Type => view)
        : Effect.map(agentsAt.at(principal, agentId, at), (found): typeof ChannelsWire.Type => found.channels)
    })

    yield* agentRoute("POST", "/v0/agents/:agentId/channels/:channel", { summary: "Configure a messaging channel (telegram, slack, discord, whatsapp)", body: { schema: Schema.Unknown, optional: true, description: "{botToken?, appToken?, dmPolicy?, allowFrom?, enabled?}" }, response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Channel.UnsupportedChannel({ channel: "" }), new Channel.ChannelsNotOnPlan(), new Channel.ConfigurationFailed({ channel: "", reason: "" }), new Secret.SecretsNotConfigured()] }, ({ principal, agentId, params, request, body }) =>
      Effect.gen(function*() {
        const channel = params["channel"] ?? ""
        yield* Effect.fromResult(Channel.requireChannel(channel))
        const input = (yield* request.text).trim() === "" ? undefined : yield* body(Schema.Unknown)
        const message = yield* channels.configure(principal, agentId, channel, input)
        return { success: true, message }
      }))

    const pairingErrors = [
      new Agent.AgentNotFound({ agentId: "" }),
      new Channel.UnsupportedChannel({ channel: "" }),
      new ChannelPairing.ChannelNotConfigured({ channel: "" }),
      new ChannelPairing.ChannelDisabled({ channel: "" }),
      new ChannelPairing.ChannelNotPairing({ channel: "" }),
      new AgentChats.AgentNotRunning({ agentId: "" }),
      new Agent.CliError({ agentId: "" }),
      new Agent.GatewayStarting({ agentId: "" })
    ]

    yield* agentRoute("GET", "/v0/agents/:agentId/channels/:channel/pairing", {
      summary: "The senders waiting on a channel in pairing mode for the owner's approval, with the codes the channel sent them",
      description: "A channel whose `dmPolicy` is `pairing` answers a sender it does not know with a code (OpenClaw: 8 letters " +
        "and digits, kept an hour); the sender passes it on to the owner, who approves it with `POST …/pairing/{code}/approve`.",
      response: { schema: PairingListWire },
      errors: pairingErrors
    }, ({ principal, agentId, params }) =>
      Effect.map(channels.pairingRequests(principal, agentId, params["channel"] ?? ""), (requests): typeof PairingListWire.Type => ({
        channel: params["channel"] as Channel.ChannelName,
        requests: requests.map((request) => ({
          code: request.code,
          senderId: request.senderId,
          createdAt: request.createdAt,
          expiresAt: request.expiresAt ?? null
        }))
      })))

    yield* agentRoute("POST", "/v0/agents/:agentId/channels/:channel/pairing/:code/approve", {
      summary: "Approve a sender by the pairing code the channel sent them: they may write to the agent from now on",
      response: { schema: Kit.Done },
      errors: [...pairingErrors, new ChannelPairing.PairingRequestNotFound({ channel: "" }), new ValidationFailed({ detail: "code must be the pairing code the channel sent (4 to 16 letters or digits)" })]
    }, ({ principal, agentId, params }) =>
      Effect.map(channels.approvePairing(principal, agentId, params["channel"] ?? "", params["code"] ?? ""), (message) => ({ success: true, message })))

    const linkErrors = [
      new Agent.AgentNotFound({ agentId: "" }),
      new ChannelPairing.ChannelNotConfigured({ channel: "" }),
      new ChannelPairing.ChannelDisabled({ channel: "" }),
      new AgentChats.AgentNotRunning({ agentId: "" }),
      new Agent.GatewayStarting({ agentId: "" }),
      new ChannelPairing.WhatsAppLinkFailed({ reason: "" })
    ]
    const linkDescription = "WhatsApp takes no token: the agent's gateway opens a WhatsApp Web session, and a phone " +
      "links to it by scanning a QR code in WhatsApp → Settings → Linked Devices. `qr` is the code as text (half " +
      "blocks, dark modules drawn), `qrDataUrl` as a PNG; WhatsApp refreshes the code about every 20 s, so show the " +
      "latest from `GET …/whatsapp/link`, which also says `linked` once the phone scanned it. A login lasts 3 minutes."

    yield* agentRoute("POST", "/v0/agents/:agentId/channels/whatsapp/link", {
      summary: "Link the agent's WhatsApp to a phone: the QR code to scan (or `linked` when a phone is linked already)",
      description: linkDescription + " `force: true` drops the phone linked now and hands out a new code.",
      body: { schema: LinkBody, optional: true, description: "{force?: boolean}" },
      response: { schema: WhatsAppLinkWire },
      errors: linkErrors
    }, ({ principal, agentId, request, body }) =>
      Effect.gen(function*() {
        const { force } = (yield* request.text).trim() === "" ? {} : yield* body(LinkBody)
        return yield* channels.startWhatsAppLink(principal, agentId, force ?? false)
      }))

    yield* agentRoute("GET", "/v0/agents/:agentId/channels/whatsapp/link", {
      summary: "Where linking the agent's WhatsApp stands: the current QR code while it waits, `linked` once scanned",
      description: linkDescription + " `status`: `waiting`, `linked`, `not_started`, or `expired` (begin again).",
      response: { schema: WhatsAppLinkWire },
      errors: linkErrors
    }, ({ principal, agentId }) => channels.whatsAppLink(principal, agentId))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/channels/:channel", { summary: "Remove a messaging channel", response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Channel.UnsupportedChannel({ channel: "" }), new Channel.RemovalFailed({ channel: "" })] }, ({ principal, agentId, params }) =>
      Effect.map(channels.remove(principal, agentId, params["channel"] ?? ""), (message) => ({ success: true, message })))
  })
)
