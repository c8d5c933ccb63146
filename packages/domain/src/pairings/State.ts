/**
 * What the pairings log holds that matters to what it records next: whether a WhatsApp link was begun and not yet
 * seen made (a link is recorded once for each begun). Approvals change nothing: nothing can refuse them
 * (CommandHandler.record).
 */
export type PairingState = { readonly _tag: "PairingLog"; readonly whatsAppLinkPending: boolean }

export const initial: PairingState = { _tag: "PairingLog", whatsAppLinkPending: false }
