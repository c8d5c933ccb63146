/** What can be asked of an agent's config record: a write the engine has applied is recorded (the service writes first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { RuntimeConfigWritten } from "./Events.ts"

/** The write as the engine applied it: the command has the event's fields. */
export class RecordConfigWrite extends Schema.TaggedClass<RecordConfigWrite>()("RecordConfigWrite", fieldsOf(RuntimeConfigWritten.fields)) {}

export const RuntimeConfigCommand = Schema.Union([RecordConfigWrite])
export type RuntimeConfigCommand = typeof RuntimeConfigCommand.Type
