/** Folds one workspace event into the workspace's state. */
import { Match } from "effect"
import type { WorkspaceEvent } from "./Events.ts"
import type { WorkspaceState } from "./State.ts"

export const evolve = (state: WorkspaceState, event: WorkspaceEvent): WorkspaceState =>
  Match.valueTags(event, {
    WorkspaceCreated: (created): WorkspaceState => ({ _tag: "Workspace", created, agents: new Set() }),
    AgentSlotTaken: ({ agentId }) => state._tag === "Workspace" ? { ...state, agents: new Set([...state.agents, agentId]) } : state,
    AgentSlotReleased: ({ agentId }) =>
      state._tag === "Workspace" ? { ...state, agents: new Set([...state.agents].filter((id) => id !== agentId)) } : state,
    WorkspaceDeleted: (): WorkspaceState => (state._tag === "Workspace" ? { _tag: "Deleted", created: state.created } : state)
  })
