/**
 * WhatsApp links on the pairings log: each link begun is recorded as it happened; a link made once for each begun,
 * whichever look sees it first (a second look records nothing), and none without a link begun through Cairn.
 */
import { ChannelPairing } from "@cairn/domain"
import { describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const ids = { agentId: "agent-1", workspaceId: "ws-1" }
const started = new ChannelPairing.WhatsAppLinkStarted({ ...ids, force: false, at: "2026-11-29T00:00:00.000Z" })
const linked = new ChannelPairing.WhatsAppLinked({ ...ids, at: "2026-11-29T00:01:00.000Z" })
const approved = new ChannelPairing.ChannelPairingApproved({ ...ids, channel: "telegram", senderId: "42", at: "2026-11-29T00:00:30.000Z" })
const seeLinked = new ChannelPairing.RecordWhatsAppLinked({ ...ids, at: linked.at })

describe("WhatsApp links", () => {
  it("records each link begun", () => {
    given(ChannelPairing.decider, [started]).when(new ChannelPairing.RecordWhatsAppLinkStarted({ ...ids, force: true, at: "2026-11-29T00:02:00.000Z" }))
      .then([new ChannelPairing.WhatsAppLinkStarted({ ...ids, force: true, at: "2026-11-29T00:02:00.000Z" })])
  })

  it("records a link made once for the links begun before it", () => {
    given(ChannelPairing.decider, [started, approved]).when(seeLinked).then([linked])
    given(ChannelPairing.decider, [started, started]).when(seeLinked).then([linked])
    given(ChannelPairing.decider, [started, linked]).when(seeLinked).then([])
    given(ChannelPairing.decider, [started, linked, started]).when(seeLinked).then([linked])
  })

  it("records no link made without one begun through Cairn", () => {
    given(ChannelPairing.decider).when(seeLinked).then([])
    given(ChannelPairing.decider, [approved]).when(seeLinked).then([])
  })
})
