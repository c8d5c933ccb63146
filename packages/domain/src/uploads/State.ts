/**
 * The uploads stream is an audit log: nothing it holds can refuse the next record, so its state is always the same
 * (the service records without reading it: CommandHandler.record).
 */
export type UploadState = { readonly _tag: "UploadLog" }

export const initial: UploadState = { _tag: "UploadLog" }
