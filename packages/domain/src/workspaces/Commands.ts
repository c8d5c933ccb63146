/** What can be asked of a workspace: an administrator creates it; agents take and give back its quota slots. */
import { Schema } from "effect"
import { Plan } from "./Events.ts"

export class CreateWorkspace extends Schema.TaggedClass<CreateWorkspace>()("CreateWorkspace", {
  workspaceId: Schema.String,
  name: Schema.String,
  plan: Plan,
  agentLimit: Schema.Int,
  internal: Schema.Boolean,
  at: Schema.String
}) {}

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

export const WorkspaceCommand = Schema.Union([CreateWorkspace, TakeAgentSlot, ReleaseAgentSlot, RequireWorkspace])
export type WorkspaceCommand = typeof WorkspaceCommand.Type
