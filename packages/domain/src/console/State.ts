/**
 * The console's stream is an audit log: nothing it holds can refuse the next record, so its state is always the
 * same. That lets the service record without reading the stream (CommandHandler.record).
 */
export type ConsoleState = { readonly _tag: "ConsoleLog" }

export const initial: ConsoleState = { _tag: "ConsoleLog" }
