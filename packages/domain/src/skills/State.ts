/** A library skill as its history leaves it: every version it had (the last is current) and the agents holding it. */
import type { EnvVar, Source } from "./Events.ts"

export interface SkillVersion {
  readonly revision: number
  readonly cid: string
  readonly version: string | undefined
  readonly at: string
}

export interface Skill {
  readonly skillId: string
  readonly workspaceId: string
  readonly userId: string
  readonly name: string
  readonly description: string
  readonly envVars: ReadonlyArray<EnvVar>
  readonly source: Source
  readonly slug: string | undefined
  /** Oldest first; never empty. */
  readonly versions: ReadonlyArray<SkillVersion>
  readonly createdAt: string
  readonly updatedAt: string
  /** Agents the skill is attached to, by id, with their names. */
  readonly agents: ReadonlyMap<string, string>
}

export type SkillState =
  | { readonly _tag: "NoSkill" }
  | { readonly _tag: "Active"; readonly skill: Skill }
  | { readonly _tag: "Removed"; readonly skill: Skill }

export const initial: SkillState = { _tag: "NoSkill" }

/** The version the library offers now. */
export const current = (skill: Skill): SkillVersion => skill.versions[skill.versions.length - 1]!
