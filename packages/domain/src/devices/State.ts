/** The devices log is an audit log: nothing it holds can refuse the next record (CommandHandler.record). */
export type DeviceState = { readonly _tag: "DeviceLog" }

export const initial: DeviceState = { _tag: "DeviceLog" }
