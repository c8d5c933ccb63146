/** What the console records: a command's run or its refusal, exactly as it happened (the service ran it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ConsoleCommandNotRun, ConsoleCommandRan } from "./Events.ts"

export class RecordRun extends Schema.TaggedClass<RecordRun>()("RecordRun", fieldsOf(ConsoleCommandRan.fields)) {}

export class RecordNotRun extends Schema.TaggedClass<RecordNotRun>()("RecordNotRun", fieldsOf(ConsoleCommandNotRun.fields)) {}

export const ConsoleCommand = Schema.Union([RecordRun, RecordNotRun])
export type ConsoleCommand = typeof ConsoleCommand.Type
