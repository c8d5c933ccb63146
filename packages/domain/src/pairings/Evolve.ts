/** A WhatsApp link begun is pending until it is seen made; nothing else changes the pairings log's state. */
import type { PairingEvent } from "./Events.ts"
import type { PairingState } from "./State.ts"

export const evolve = (state: PairingState, event: PairingEvent): PairingState => {
  switch (event._tag) {
    case "WhatsAppLinkStarted":
      return state.whatsAppLinkPending ? state : { ...state, whatsAppLinkPending: true }
    case "WhatsAppLinked":
      return { ...state, whatsAppLinkPending: false }
    case "ChannelPairingApproved":
      return state
  }
}
