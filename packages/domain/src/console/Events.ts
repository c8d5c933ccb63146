/**
 * What is done in an agent's console (stream `console-<agentId>`): each command asked for, with how it ended. For
 * audit: the command, where it ran and how it ended, never what it printed. Stored: the schema only ever grows
 * optional fields.
 */
import { Schema } from "effect"

const fields = {
  agentId: Schema.String,
  workspaceId: Schema.String,
  command: Schema.String,
  /** The working directory asked for; absent means the workspace. */
  cwd: Schema.optionalKey(Schema.String),
  at: Schema.String
}

/** The command ran (whatever its exit code). */
export class ConsoleCommandRan extends Schema.TaggedClass<ConsoleCommandRan>()("ConsoleCommandRan", {
  ...fields,
  exitCode: Schema.Number,
  durationMs: Schema.Number,
  timedOut: Schema.Boolean,
  truncated: Schema.Boolean
}) {}

/** The command did not run: its working directory led out of the workspace, or it could not be started. */
export class ConsoleCommandNotRun extends Schema.TaggedClass<ConsoleCommandNotRun>()("ConsoleCommandNotRun", {
  ...fields,
  reason: Schema.Literals(["cwd-outside-workspace", "start-failed"])
}) {}

export const ConsoleEvent = Schema.Union([ConsoleCommandRan, ConsoleCommandNotRun])
export type ConsoleEvent = typeof ConsoleEvent.Type
