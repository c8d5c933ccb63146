/** Folds one skill event into the skill's state; events after removal change nothing. */
import { Match } from "effect"
import type { SkillEvent } from "./Events.ts"
import type { Skill, SkillState } from "./State.ts"

const active = (state: SkillState, change: (skill: Skill) => Skill): SkillState =>
  state._tag === "Active" ? { _tag: "Active", skill: change(state.skill) } : state

export const evolve = (state: SkillState, event: SkillEvent): SkillState =>
  Match.valueTags(event, {
    SkillAdded: (e): SkillState => ({
      _tag: "Active",
      skill: {
        skillId: e.skillId,
        workspaceId: e.workspaceId,
        userId: e.userId,
        name: e.name,
        description: e.description,
        envVars: e.envVars,
        source: e.source,
        slug: e.slug,
        versions: [{ revision: 1, cid: e.cid, version: e.version, at: e.at }],
        createdAt: e.at,
        updatedAt: e.at,
        agents: new Map()
      }
    }),
    SkillVersionAdded: (e) =>
      active(state, (s) => ({
        ...s,
        description: e.description,
        envVars: e.envVars,
        versions: [...s.versions, { revision: e.revision, cid: e.cid, version: e.version, at: e.at }],
        updatedAt: e.at
      })),
    SkillAttached: (e) => active(state, (s) => ({ ...s, agents: new Map([...s.agents, [e.agentId, e.agentName]]) })),
    SkillDetached: (e) => active(state, (s) => ({ ...s, agents: new Map([...s.agents].filter(([id]) => id !== e.agentId)) })),
    SkillRemoved: (): SkillState => (state._tag === "Active" ? { _tag: "Removed", skill: state.skill } : state)
  })
