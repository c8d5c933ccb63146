/** Decides a chats record: each turn is recorded as it happened. Pure and total. */
import { Result } from "effect"
import type { ChatCommand } from "./Commands.ts"
import { ChatAnswered, type ChatEvent } from "./Events.ts"
import type { ChatState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<ChatEvent>, never>

export const decide = ({ _tag, ...fields }: ChatCommand, _state: ChatState): Decision => Result.succeed([new ChatAnswered(fields)])
