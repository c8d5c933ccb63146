/**
 * What can be asked of an agent's task record: each recording of what the engine has done (the service asks the
 * engine first: the tasks are the engine's). Each command has its event's fields.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { TaskCreated, TaskDeleted, TaskRunRequested, TaskToggled, TaskUpdated, TemplateTasksCreated } from "./Events.ts"

export class RecordTaskCreated extends Schema.TaggedClass<RecordTaskCreated>()("RecordTaskCreated", fieldsOf(TaskCreated.fields)) {}
export class RecordTaskUpdated extends Schema.TaggedClass<RecordTaskUpdated>()("RecordTaskUpdated", fieldsOf(TaskUpdated.fields)) {}
export class RecordTaskToggled extends Schema.TaggedClass<RecordTaskToggled>()("RecordTaskToggled", fieldsOf(TaskToggled.fields)) {}
export class RecordTaskDeleted extends Schema.TaggedClass<RecordTaskDeleted>()("RecordTaskDeleted", fieldsOf(TaskDeleted.fields)) {}
export class RecordTaskRunRequested extends Schema.TaggedClass<RecordTaskRunRequested>()(
  "RecordTaskRunRequested",
  fieldsOf(TaskRunRequested.fields)
) {}

export class RecordTemplateTasksCreated extends Schema.TaggedClass<RecordTemplateTasksCreated>()(
  "RecordTemplateTasksCreated",
  fieldsOf(TemplateTasksCreated.fields)
) {}

export const TaskCommand = Schema.Union([RecordTaskCreated, RecordTaskUpdated, RecordTaskToggled, RecordTaskDeleted, RecordTaskRunRequested, RecordTemplateTasksCreated])
export type TaskCommand = typeof TaskCommand.Type
