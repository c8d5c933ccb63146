/** Why a skill command was refused (service interface, section 7). */
import { Schema } from "effect"

/** An unknown skill, another workspace's, a removed one, or a CID that is no version of a library skill. */
export class SkillNotFound extends Schema.TaggedError<SkillNotFound>()("SkillNotFound", { skill: Schema.String }) {
  readonly status = 404
  override readonly message = "Skill not installed in the library"
}

/** The folder is already a version of a library skill (or a hub skill of that slug is installed). */
export class SkillAlreadyInLibrary extends Schema.TaggedError<SkillAlreadyInLibrary>()("SkillAlreadyInLibrary", {
  name: Schema.String
}) {
  readonly status = 409
  override get message() {
    return `Skill ${this.name} is already in the library`
  }
}

/** Skill ids are random; a second add under the same id is refused. */
export class SkillAlreadyExists extends Schema.TaggedError<SkillAlreadyExists>()("SkillAlreadyExists", { skillId: Schema.String }) {
  readonly status = 409
  override readonly message = "Skill already exists"
}

/** A skill attached to agents is not removed from the library: detach it first (the message names them). */
export class SkillInUse extends Schema.TaggedError<SkillInUse>()("SkillInUse", {
  skillId: Schema.String,
  agents: Schema.Array(Schema.Struct({ agentId: Schema.String, name: Schema.String }))
}) {
  readonly status = 409
  override get message() {
    return `Skill is attached to agents: ${this.agents.map((a) => `${a.name} (${a.agentId})`).join(", ")}; detach it first`
  }
  get details() {
    return { agents: this.agents }
  }
}

/**
 * Files of the skill were changed inside the agent's workspace since it was installed: an update would overwrite
 * them, so it is refused unless forced. The message and `changedFiles` name them.
 */
export class SkillVersionConflict extends Schema.TaggedError<SkillVersionConflict>()("SkillVersionConflict", {
  skillId: Schema.String,
  changedFiles: Schema.Array(Schema.String)
}) {
  readonly status = 409
  override get message() {
    return `Skill version conflict: ${this.changedFiles.join(", ")} changed in the agent's workspace; update with force: true to overwrite`
  }
  get details() {
    return { changedFiles: this.changedFiles }
  }
}

/**
 * The installation requires skills signed by a trusted wallet (`SKILLS_TRUSTED_SIGNERS`), and this version's folder
 * CID has no signature, or one by another wallet: it is not attached or installed. `signer` names who signed, if
 * anyone did.
 */
export class UntrustedSkill extends Schema.TaggedError<UntrustedSkill>()("UntrustedSkill", {
  name: Schema.String,
  cid: Schema.String,
  signer: Schema.NullOr(Schema.String)
}) {
  readonly status = 403
  override get message() {
    return "Skill is not signed by a trusted signer"
  }
  get details() {
    return { skill: this.name, skillCid: this.cid, signedBy: this.signer }
  }
}

export type SkillError = SkillNotFound | SkillAlreadyInLibrary | SkillAlreadyExists | SkillInUse
