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

export const WorkspaceEvent = Schema.Union([WorkspaceCreated])
export type WorkspaceEvent = typeof WorkspaceEvent.Type

export class WorkspaceNotFound extends Schema.TaggedError<WorkspaceNotFound>()("WorkspaceNotFound", {
  workspaceId: Schema.String
}) {
  readonly status = 404
  override get message() {
    return "Workspace not found"
  }
}

export type WorkspaceState =
  | { readonly _tag: "NoWorkspace" }
  | { readonly _tag: "Workspace"; readonly created: WorkspaceCreated }

export const initial: WorkspaceState = { _tag: "NoWorkspace" }

export const evolve = (state: WorkspaceState, event: WorkspaceEvent): WorkspaceState =>
  event._tag === "WorkspaceCreated" ? { _tag: "Workspace", created: event } : state

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
