/** What can be asked of a workspace: an administrator creates it; agents take and give back its quota slots. */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { WorkspaceCreated } from "./Events.ts"

/** The workspace is recorded as it is asked for: the command has the event's fields. */
export class CreateWorkspace extends Schema.TaggedClass<CreateWorkspace>()("CreateWorkspace", fieldsOf(WorkspaceCreated.fields)) {}

/** An agent is being created: it takes a slot if the workspace is under its limit (the quota). */
export class TakeAgentSlot extends Schema.TaggedClass<TakeAgentSlot>()("TakeAgentSlot", {
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

/** An agent is being deleted: its slot is free again (nothing to record if it held none). */
export class ReleaseAgentSlot extends Schema.TaggedClass<ReleaseAgentSlot>()("ReleaseAgentSlot", {
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

/** Asserts the workspace exists, recording nothing: appended beside another stream's events (an API key's). */
export class RequireWorkspace extends Schema.TaggedClass<RequireWorkspace>()("RequireWorkspace", {
  workspaceId: Schema.String
}) {}

/** An administrator deletes the workspace; it must have no agents left. */
export class DeleteWorkspace extends Schema.TaggedClass<DeleteWorkspace>()("DeleteWorkspace", {
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const WorkspaceCommand = Schema.Union([CreateWorkspace, TakeAgentSlot, ReleaseAgentSlot, RequireWorkspace, DeleteWorkspace])
export type WorkspaceCommand = typeof WorkspaceCommand.Type
