/** What happened to a skill in a workspace's library. Stream `skill-<id>`. */
import { Schema } from "effect"

/** A variable the skill needs, from its `.env.example` (the comment above a line is its description). */
export const EnvVar = Schema.Struct({ name: Schema.String, description: Schema.optionalKey(Schema.String) })
export type EnvVar = typeof EnvVar.Type

/** Where a library skill came from: registered from a stored folder CID, uploaded as an archive, or a hub install. */
export const Source = Schema.Literals(["cid", "upload", "clawhub"])
export type Source = typeof Source.Type

export class SkillAdded extends Schema.TaggedClass<SkillAdded>()("SkillAdded", {
  skillId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  /** SKILL.md's `name`: the folder the skill is installed as, unique in the workspace's library. */
  name: Schema.String,
  description: Schema.String,
  envVars: Schema.Array(EnvVar),
  source: Source,
  /** The hub slug of a hub install. */
  slug: Schema.optionalKey(Schema.String),
  /** The folder's CID (a UnixFS directory on the public network). */
  cid: Schema.String,
  /** The version the hub or SKILL.md names, if any. */
  version: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

/** A newer folder of the same skill (same name): it becomes the library's current version. */
export class SkillVersionAdded extends Schema.TaggedClass<SkillVersionAdded>()("SkillVersionAdded", {
  skillId: Schema.String,
  /** 1 for the folder the skill was added with, one more per version. */
  revision: Schema.Int,
  cid: Schema.String,
  version: Schema.optionalKey(Schema.String),
  description: Schema.String,
  envVars: Schema.Array(EnvVar),
  at: Schema.String
}) {}

export class SkillAttached extends Schema.TaggedClass<SkillAttached>()("SkillAttached", {
  skillId: Schema.String,
  agentId: Schema.String,
  agentName: Schema.String,
  at: Schema.String
}) {}

export class SkillDetached extends Schema.TaggedClass<SkillDetached>()("SkillDetached", {
  skillId: Schema.String,
  agentId: Schema.String,
  at: Schema.String
}) {}

export class SkillRemoved extends Schema.TaggedClass<SkillRemoved>()("SkillRemoved", {
  skillId: Schema.String,
  at: Schema.String
}) {}

export const SkillEvent = Schema.Union([SkillAdded, SkillVersionAdded, SkillAttached, SkillDetached, SkillRemoved])
export type SkillEvent = typeof SkillEvent.Type
