/**
 * Workspaces: the tenant that owns files, keys and agents. Created by an administrator with a plan, an agent
 * limit and an `internal` flag (internal accounts may use the issues endpoints). Stream `workspace-<id>`.
 */
import type { Decider } from "../Decider.ts"
import type { WorkspaceCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { WorkspaceError } from "./Errors.ts"
import { type Plan, WorkspaceEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type WorkspaceState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (workspaceId: string) => `workspace-${workspaceId}`

/** Default agent limits per plan, used when the administrator gives none. */
export const defaultAgentLimit = (plan: Plan): number => (plan === "pro" ? 10 : 1)

export const decider: Decider<WorkspaceCommand, WorkspaceEvent, WorkspaceState, WorkspaceError> = {
  initial,
  decide,
  evolve,
  events: WorkspaceEvent
}
