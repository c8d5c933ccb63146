/**
 * What users did to an agent's scheduled tasks through Cairn (stream `agenttasks-<agentId>`), for audit. The tasks
 * themselves live in the engine; an event names the task and its schedule, and the payload's kind but not its text
 * (an agent turn's prompt can be long, and the engine holds it). Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"
import { Schedule } from "./Spec.ts"

export class TaskCreated extends Schema.TaggedClass<TaskCreated>()("TaskCreated", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  taskId: Schema.String,
  name: Schema.String,
  schedule: Schedule,
  payloadKind: Schema.String,
  enabled: Schema.Boolean,
  /** The template that declared it, when Cairn created it with the agent (TemplateTasksCreated follows). */
  fromTemplate: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class TaskUpdated extends Schema.TaggedClass<TaskUpdated>()("TaskUpdated", {
  agentId: Schema.String,
  taskId: Schema.String,
  /** The task's name after the change. */
  name: Schema.String,
  /** The fields the change gave (Spec.patchFields). */
  fields: Schema.Array(Schema.String),
  /** The new schedule, when it changed. */
  schedule: Schema.optionalKey(Schedule),
  at: Schema.String
}) {}

export class TaskToggled extends Schema.TaggedClass<TaskToggled>()("TaskToggled", {
  agentId: Schema.String,
  taskId: Schema.String,
  name: Schema.String,
  enabled: Schema.Boolean,
  /** Whether it is one of the engine's own jobs. */
  system: Schema.Boolean,
  at: Schema.String
}) {}

export class TaskDeleted extends Schema.TaggedClass<TaskDeleted>()("TaskDeleted", {
  agentId: Schema.String,
  taskId: Schema.String,
  name: Schema.String,
  at: Schema.String
}) {}

export class TaskRunRequested extends Schema.TaggedClass<TaskRunRequested>()("TaskRunRequested", {
  agentId: Schema.String,
  taskId: Schema.String,
  name: Schema.String,
  runId: Schema.String,
  at: Schema.String
}) {}

/** The tasks the agent's template declares were created in its gateway (once: a template's tasks are its first). */
export class TemplateTasksCreated extends Schema.TaggedClass<TemplateTasksCreated>()("TemplateTasksCreated", {
  agentId: Schema.String,
  templateId: Schema.String,
  /** The engine ids of the tasks created, in the manifest's order. */
  taskIds: Schema.Array(Schema.String),
  at: Schema.String
}) {}

export const TaskEvent = Schema.Union([TaskCreated, TaskUpdated, TaskToggled, TaskDeleted, TaskRunRequested, TemplateTasksCreated])
export type TaskEvent = typeof TaskEvent.Type
