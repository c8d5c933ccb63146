/** What happens to a workspace (stream `workspace-<id>`): created, agent slots taken and given back, deleted. */
import { Schema } from "effect"

export const Plan = Schema.Literals(["free", "pro"])
export type Plan = typeof Plan.Type

export class WorkspaceCreated extends Schema.TaggedClass<WorkspaceCreated>()("WorkspaceCreated", {
  workspaceId: Schema.String,
  name: Schema.String,
  plan: Plan,
  agentLimit: Schema.Int,
  internal: Schema.Boolean,
  at: Schema.String
}) {}

/** An agent took one of the workspace's agent slots (quota), or gave it back. */
export class AgentSlotTaken extends Schema.TaggedClass<AgentSlotTaken>()("AgentSlotTaken", {
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class AgentSlotReleased extends Schema.TaggedClass<AgentSlotReleased>()("AgentSlotReleased", {
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

/** The workspace is gone: its keys stop working and its secrets' data key is destroyed (crypto-shredding). */
export class WorkspaceDeleted extends Schema.TaggedClass<WorkspaceDeleted>()("WorkspaceDeleted", {
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const WorkspaceEvent = Schema.Union([WorkspaceCreated, AgentSlotTaken, AgentSlotReleased, WorkspaceDeleted])
export type WorkspaceEvent = typeof WorkspaceEvent.Type
