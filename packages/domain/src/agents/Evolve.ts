/** Folds one agent event into the agent's state; events after deletion change nothing. */
import { Match } from "effect"
import type { AgentEvent } from "./Events.ts"
import type { Agent, AgentState } from "./State.ts"

const live = (state: AgentState, change: (agent: Agent) => Agent): AgentState =>
  state._tag === "Live" ? { _tag: "Live", agent: change(state.agent) } : state

export const evolve = (state: AgentState, event: AgentEvent): AgentState =>
  Match.valueTags(event, {
    AgentCreated: (e): AgentState => ({
      _tag: "Live",
      agent: {
        agentId: e.agentId,
        workspaceId: e.workspaceId,
        userId: e.userId,
        name: e.name,
        description: e.description ?? null,
        vibe: e.vibe ?? null,
        emoji: e.emoji ?? null,
        model: e.model ?? null,
        engineVersion: e.engineVersion,
        status: "starting",
        tokenGeneration: 0,
        recovering: false,
        node: e.node ?? null,
        createdAt: e.at,
        secrets: new Map(),
        skills: new Map()
      }
    }),
    AgentStarted: (e) =>
      live(state, (a) => ({ ...a, status: "running", engineVersion: e.engineVersion, recovering: false, node: e.node ?? a.node })),
    AgentFailedToStart: () => live(state, (a) => ({ ...a, status: "not_running" })),
    AgentStopped: (e) => live(state, (a) => ({ ...a, status: "not_running", recovering: a.recovering || e.reason !== "stopped" })),
    AgentRecoveryScheduled: () => live(state, (a) => ({ ...a, recovering: true })),
    AgentRestartRequested: () => live(state, (a) => ({ ...a, status: "starting" })),
    GatewayTokenRotated: (e) => live(state, (a) => ({ ...a, tokenGeneration: e.generation })),
    AgentSecretsAttached: (e) =>
      live(state, (a) => ({ ...a, secrets: new Map([...a.secrets, ...e.secrets.map((s) => [s.secretId, s.name] as const)]) })),
    AgentSecretDetached: (e) => live(state, (a) => ({ ...a, secrets: new Map([...a.secrets].filter(([id]) => id !== e.secretId)) })),
    AgentSkillsAttached: (e) =>
      live(state, (a) => ({ ...a, skills: new Map([...a.skills, ...e.skills.map((s) => [s.skillId, s] as const)]) })),
    AgentSkillDetached: (e) => live(state, (a) => ({ ...a, skills: new Map([...a.skills].filter(([id]) => id !== e.skillId)) })),
    AgentSkillUpdated: (e) => live(state, (a) => ({ ...a, skills: new Map([...a.skills, [e.skill.skillId, e.skill]]) })),
    AgentProfileChanged: ({ _tag, agentId, at, ...changed }) => live(state, (a) => ({ ...a, ...changed })),
    AgentFellAsleep: () => live(state, (a) => ({ ...a, status: "sleeping", recovering: false })),
    AgentWoken: () => live(state, (a) => ({ ...a, status: "starting" })),
    AgentDeleted: (): AgentState => (state._tag === "Live" ? { _tag: "Deleted", agent: state.agent } : state)
  })
