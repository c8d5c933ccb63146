/** Decides a workspace command: the agent quota is decided here, on the workspace's own stream. Pure and total. */
import { Match, Result } from "effect"
import type { WorkspaceCommand } from "./Commands.ts"
import { AgentLimitReached, WorkspaceAlreadyExists, type WorkspaceError, WorkspaceHasAgents, WorkspaceNotFound } from "./Errors.ts"
import { AgentSlotReleased, AgentSlotTaken, WorkspaceCreated, WorkspaceDeleted, type WorkspaceEvent } from "./Events.ts"
import type { WorkspaceState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<WorkspaceEvent>, WorkspaceError>

const existing = (state: WorkspaceState, workspaceId: string) =>
  state._tag === "Workspace" ? Result.succeed(state) : Result.fail(new WorkspaceNotFound({ workspaceId }))
// (A deleted workspace is not found: it takes no agents and names no new keys.)

export const decide = (command: WorkspaceCommand, state: WorkspaceState): Decision =>
  Match.valueTags(command, {
    CreateWorkspace: ({ _tag, ...fields }): Decision =>
      state._tag === "NoWorkspace"
        ? Result.succeed([new WorkspaceCreated(fields)])
        : Result.fail(new WorkspaceAlreadyExists({ workspaceId: fields.workspaceId })),
    TakeAgentSlot: ({ _tag, ...fields }) =>
      Result.flatMap(existing(state, fields.workspaceId), (workspace): Decision =>
        workspace.agents.size >= workspace.created.agentLimit
          ? Result.fail(new AgentLimitReached({ limit: workspace.created.agentLimit }))
          : Result.succeed([new AgentSlotTaken(fields)])),
    ReleaseAgentSlot: ({ _tag, ...fields }) =>
      Result.map(existing(state, fields.workspaceId), (workspace) =>
        workspace.agents.has(fields.agentId) ? [new AgentSlotReleased(fields)] : []),
    RequireWorkspace: ({ workspaceId }) => Result.map(existing(state, workspaceId), () => []),
    DeleteWorkspace: ({ workspaceId, at }) =>
      Result.flatMap(existing(state, workspaceId), (workspace): Decision =>
        workspace.agents.size > 0
          ? Result.fail(new WorkspaceHasAgents({ agents: workspace.agents.size }))
          : Result.succeed([new WorkspaceDeleted({ workspaceId, at })]))
  })
