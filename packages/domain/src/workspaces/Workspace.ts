/**
 * A workspace: the tenant that owns files, keys and agents. Created by an administrator with a plan, an agent
 * limit and an `internal` flag (internal accounts may use the issues endpoints). Stream `workspace-<id>`.
 */
import { Result, Schema } from "effect"

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

export const WorkspaceEvent = Schema.Union([WorkspaceCreated, AgentSlotTaken, AgentSlotReleased])
export type WorkspaceEvent = typeof WorkspaceEvent.Type

export class WorkspaceNotFound extends Schema.TaggedError<WorkspaceNotFound>()("WorkspaceNotFound", {
  workspaceId: Schema.String
}) {
  readonly status = 404
  override get message() {
    return "Workspace not found"
  }
}

export class AgentLimitReached extends Schema.TaggedError<AgentLimitReached>()("AgentLimitReached", {
  limit: Schema.Int
}) {
  readonly status = 403
  override get message() {
    return "Agent limit reached"
  }
}

export type WorkspaceState =
  | { readonly _tag: "NoWorkspace" }
  | { readonly _tag: "Workspace"; readonly created: WorkspaceCreated; readonly agents: ReadonlySet<string> }

export const initial: WorkspaceState = { _tag: "NoWorkspace" }

export const evolve = (state: WorkspaceState, event: WorkspaceEvent): WorkspaceState => {
  switch (event._tag) {
    case "WorkspaceCreated":
      return { _tag: "Workspace", created: event, agents: new Set() }
    case "AgentSlotTaken":
      return state._tag === "Workspace" ? { ...state, agents: new Set([...state.agents, event.agentId]) } : state
    case "AgentSlotReleased":
      return state._tag === "Workspace"
        ? { ...state, agents: new Set([...state.agents].filter((id) => id !== event.agentId)) }
        : state
  }
}

/** Takes an agent slot when the workspace is under its limit: the quota, decided on the workspace's stream. */
export const takeAgentSlot = (
  state: WorkspaceState,
  input: { readonly workspaceId: string; readonly agentId: string; readonly at: string }
): Result.Result<ReadonlyArray<WorkspaceEvent>, WorkspaceNotFound | AgentLimitReached> => {
  if (state._tag === "NoWorkspace") return Result.fail(new WorkspaceNotFound({ workspaceId: input.workspaceId }))
  if (state.agents.size >= state.created.agentLimit) return Result.fail(new AgentLimitReached({ limit: state.created.agentLimit }))
  return Result.succeed([new AgentSlotTaken(input)])
}

export const stream = (workspaceId: string) => `workspace-${workspaceId}`

/** Default agent limits per plan, used when the administrator gives none. */
export const defaultAgentLimit = (plan: Plan): number => (plan === "pro" ? 10 : 1)

export const create = (input: {
  readonly workspaceId: string
  readonly name: string
  readonly plan: Plan
  readonly agentLimit: number
  readonly internal: boolean
  readonly at: string
}): Result.Result<ReadonlyArray<WorkspaceEvent>, never> => Result.succeed([new WorkspaceCreated(input)])
