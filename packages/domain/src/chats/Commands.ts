/** What the chats log records: a turn the gateway answered (the service asked it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ChatAnswered } from "./Events.ts"

export class RecordChat extends Schema.TaggedClass<RecordChat>()("RecordChat", fieldsOf(ChatAnswered.fields)) {}

export type ChatCommand = RecordChat
