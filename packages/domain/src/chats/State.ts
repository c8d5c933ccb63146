/** The chats log is an audit log: nothing it holds can refuse the next record (CommandHandler.record). */
export type ChatState = { readonly _tag: "ChatLog" }

export const initial: ChatState = { _tag: "ChatLog" }
