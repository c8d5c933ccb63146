/**
 * What can be asked of a library skill. The application reads and checks the folder (SKILL.md, `.env.example`)
 * before deciding, so a command carries what the folder says.
 */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { EnvVar, SkillAdded } from "./Events.ts"

export class AddSkill extends Schema.TaggedClass<AddSkill>()("AddSkill", fieldsOf(SkillAdded.fields)) {}

/** A folder whose SKILL.md names a skill already in the library: its next version. */
export class AddSkillVersion extends Schema.TaggedClass<AddSkillVersion>()("AddSkillVersion", {
  skillId: Schema.String,
  workspaceId: Schema.String,
  cid: Schema.String,
  version: Schema.optionalKey(Schema.String),
  description: Schema.String,
  envVars: Schema.Array(EnvVar),
  at: Schema.String
}) {}

export class AttachSkill extends Schema.TaggedClass<AttachSkill>()("AttachSkill", {
  skillId: Schema.String,
  workspaceId: Schema.String,
  agentId: Schema.String,
  agentName: Schema.String,
  at: Schema.String
}) {}

export class DetachSkill extends Schema.TaggedClass<DetachSkill>()("DetachSkill", {
  skillId: Schema.String,
  workspaceId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class RemoveSkill extends Schema.TaggedClass<RemoveSkill>()("RemoveSkill", {
  skillId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const SkillCommand = Schema.Union([AddSkill, AddSkillVersion, AttachSkill, DetachSkill, RemoveSkill])
export type SkillCommand = typeof SkillCommand.Type
