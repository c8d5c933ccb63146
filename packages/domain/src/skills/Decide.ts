/** Decides a skill command against the skill's state: the events to record, or why not. Pure and total. */
import { Match, Result } from "effect"
import type { SkillCommand } from "./Commands.ts"
import { SkillAlreadyExists, SkillAlreadyInLibrary, type SkillError, SkillInUse, SkillNotFound } from "./Errors.ts"
import { SkillAdded, SkillAttached, SkillDetached, type SkillEvent, SkillRemoved, SkillVersionAdded } from "./Events.ts"
import { current, type Skill, type SkillState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<SkillEvent>, SkillError>

/** The skill as its workspace sees it; another workspace's skill, or a removed one, is not found. */
export const visible = (state: SkillState, skillId: string, workspaceId: string): Result.Result<Skill, SkillNotFound> =>
  state._tag === "Active" && state.skill.workspaceId === workspaceId
    ? Result.succeed(state.skill)
    : Result.fail(new SkillNotFound({ skill: skillId }))

export const decide = (command: SkillCommand, state: SkillState): Decision =>
  Match.valueTags(command, {
    AddSkill: ({ _tag, ...fields }): Decision =>
      state._tag === "NoSkill" ? Result.succeed([new SkillAdded(fields)]) : Result.fail(new SkillAlreadyExists({ skillId: fields.skillId })),
    AddSkillVersion: ({ skillId, workspaceId, cid, version, description, envVars, at }) =>
      Result.flatMap(visible(state, skillId, workspaceId), (skill): Decision =>
        skill.versions.some((v) => v.cid === cid)
          ? Result.fail(new SkillAlreadyInLibrary({ name: skill.name }))
          : Result.succeed([
            new SkillVersionAdded({
              skillId,
              revision: current(skill).revision + 1,
              cid,
              ...(version === undefined ? {} : { version }),
              description,
              envVars,
              at
            })
          ])),
    AttachSkill: ({ skillId, workspaceId, agentId, agentName, at }) =>
      Result.map(visible(state, skillId, workspaceId), (skill) =>
        skill.agents.has(agentId) ? [] : [new SkillAttached({ skillId, agentId, agentName, at })]),
    DetachSkill: ({ skillId, workspaceId, agentId, at }) =>
      Result.map(visible(state, skillId, workspaceId), (skill) =>
        skill.agents.has(agentId) ? [new SkillDetached({ skillId, agentId, at })] : []),
    RemoveSkill: ({ skillId, workspaceId, at }) =>
      Result.flatMap(visible(state, skillId, workspaceId), (skill): Decision =>
        skill.agents.size > 0
          ? Result.fail(new SkillInUse({ skillId, agents: [...skill.agents].map(([agentId, name]) => ({ agentId, name })) }))
          : Result.succeed([new SkillRemoved({ skillId, at })]))
  })
