/** The chats log holds no state: every event leaves it as it was. */
import type { ChatEvent } from "./Events.ts"
import type { ChatState } from "./State.ts"

export const evolve = (state: ChatState, _event: ChatEvent): ChatState => state
