/** The pairings log is an audit log: nothing it holds can refuse the next record (CommandHandler.record). */
export type PairingState = { readonly _tag: "PairingLog" }

export const initial: PairingState = { _tag: "PairingLog" }
