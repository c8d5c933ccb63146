/**
 * `/v0/skills` (the workspace's library: register a stored folder CID or upload an archive, list, delete), the
 * hub (`/v0/clawhub`: browse, look up, install into the library) and an agent's skills (attach up to 10, list,
 * detach, see and apply updates).
 */
import { AgentsAt, type AgentSkillView, Skills, type SkillUpdate, type SkillView } from "@cairn/application"
import { Agent, Skill, ValidationFailed } from "@cairn/domain"
import { Archive, type HubSkill, HubSkillNotFound, SkillHubUnavailable } from "@cairn/skill-hub"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Body from "../Body.ts"
import { atDescription, AtQuery } from "./At.ts"
import * as Kit from "./Kit.ts"

// Fields are checked by the service, so a missing or malformed one gets its own `Validation failed` detail.
const AddSkill = Schema.Struct({
  skillCid: Schema.optional(Schema.Unknown),
  name: Schema.optional(Schema.Unknown),
  description: Schema.optional(Schema.Unknown)
})
const skillList = Schema.Array(Schema.String).pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(100)))
/** `skillCids`, or `skills` as the interface document names the field: CIDs of library skills' versions, or their ids. */
const AttachSkills = Schema.Struct({ skillCids: Schema.optional(skillList), skills: Schema.optional(skillList) })
const UpdateSkill = Schema.Struct({ version: Schema.optional(Schema.Unknown), force: Schema.optional(Schema.Unknown) })

const archiveTypes = ["application/zip", "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/octet-stream"]

/** What the hub routes may answer besides their own: the hub has no such skill, or could not be reached. */
const hubNotFound = new HubSkillNotFound({ slug: "<slug>" })
const hubUnavailable = new SkillHubUnavailable({ registry: "<registry>", cause: null })

const tooLarge = () => new ValidationFailed({ detail: `the archive is larger than ${Archive.defaultLimits.maxArchiveBytes / 1024 / 1024} MiB` })

const hubSort = Schema.Literals(["popular", "newest", "name"])
const HubQuery = Schema.Struct({
  q: Schema.optionalKey(Schema.String),
  category: Schema.optionalKey(Schema.String),
  sort: Schema.optionalKey(hubSort),
  cursor: Schema.optionalKey(Schema.String),
  limit: Schema.optionalKey(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))))
})

/** A library skill as the routes answer it. */
const SkillWire = Schema.Struct({
  skillId: Schema.String,
  skillCid: Schema.String,
  name: Schema.String,
  description: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  userId: Schema.String,
  envVars: Schema.Array(Skill.EnvVar),
  version: Schema.NullOr(Schema.String),
  revision: Schema.Int,
  source: Skill.Source,
  slug: Schema.NullOr(Schema.String),
  fileId: Schema.Null,
  /** The wallet whose EIP-712 signature the current version's folder CID carries (`/v3` signatures), if any. */
  signedBy: Schema.NullOr(Schema.String)
})

const toWire = (skill: SkillView): typeof SkillWire.Type => ({
  skillId: skill.skillId,
  skillCid: skill.skillCid,
  name: skill.name,
  description: skill.description,
  createdAt: skill.createdAt,
  updatedAt: skill.updatedAt,
  userId: skill.userId,
  envVars: skill.envVars,
  version: skill.version,
  revision: skill.revision,
  source: skill.source,
  slug: skill.slug,
  fileId: skill.fileId,
  signedBy: skill.signedBy
})

const SkillAdded = Schema.Struct({ success: Schema.Boolean, skill: SkillWire })

/** A skill as an agent holds it, and whether the library has a newer version. */
const AgentSkillWire = Schema.Struct({
  skillId: Schema.String,
  skillCid: Schema.String,
  name: Schema.String,
  description: Schema.String,
  version: Schema.NullOr(Schema.String),
  source: Skill.Source,
  slug: Schema.NullOr(Schema.String),
  attachedAt: Schema.String,
  updatedAt: Schema.String,
  updateAvailable: Schema.Boolean,
  /** Who signed the version the agent holds, if anyone. */
  signedBy: Schema.NullOr(Schema.String)
})

/** A hub listing in the shape Pinata's clients read (`HubSkill`), plus the version and whether it is installed. */
const HubSkillWire = Schema.Struct({
  hubSkillId: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  longDescription: Schema.String,
  version: Schema.String,
  authorName: Schema.NullOr(Schema.String),
  category: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  envVars: Schema.Array(Skill.EnvVar),
  featured: Schema.Boolean,
  installCount: Schema.Number,
  installed: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String
})

/** An attached skill with a newer version in the library or on the hub (`latestCid` null: not fetched yet). */
const SkillUpdateWire = Schema.Struct({
  skillId: Schema.String,
  name: Schema.String,
  currentVersion: Schema.NullOr(Schema.String),
  currentCid: Schema.String,
  latestVersion: Schema.NullOr(Schema.String),
  latestCid: Schema.NullOr(Schema.String),
  source: Skill.Source
})
const skillUpdateWire = (update: SkillUpdate): typeof SkillUpdateWire.Type => ({
  skillId: update.skillId,
  name: update.name,
  currentVersion: update.currentVersion,
  currentCid: update.currentCid,
  latestVersion: update.latestVersion,
  latestCid: update.latestCid,
  source: update.source
})

const SkillMoved = Schema.Struct({
  success: Schema.Boolean,
  updated: Schema.Boolean,
  message: Schema.String,
  skill: Schema.Struct({ skillId: Schema.String, skillCid: Schema.String, name: Schema.String, version: Schema.NullOr(Schema.String) })
})

const agentSkillWire = (skill: AgentSkillView): typeof AgentSkillWire.Type => ({
  skillId: skill.skillId,
  skillCid: skill.skillCid,
  name: skill.name,
  description: skill.description,
  version: skill.version,
  source: skill.source,
  slug: skill.slug,
  attachedAt: skill.attachedAt,
  updatedAt: skill.updatedAt,
  updateAvailable: skill.latestRevision > skill.revision,
  signedBy: skill.signedBy
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const skills = yield* Skills
    const agentsAt = yield* AgentsAt

    yield* route("GET", "/v0/skills", { summary: "List the workspace's skill library", response: { schema: Schema.Struct({ skills: Schema.Array(SkillWire), currentUserId: Schema.String }) } }, ({ principal }) =>
      Effect.map(skills.list(principal), (list) => ({ skills: list.map(toWire), currentUserId: principal.userId })))

    yield* route("POST", "/v0/skills", { summary: "Register a stored folder CID as a skill (JSON) or upload a skill archive (zip or tar.gz)", body: { schema: AddSkill, description: "JSON {skillCid, name?, description?}, or the archive's bytes with an archive content type" }, response: { status: 201, schema: SkillAdded }, errors: [new Skill.SkillAlreadyInLibrary({ name: "" })] }, ({ principal, request, body }) =>
      Effect.gen(function*() {
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        const skill = archiveTypes.includes(type)
          ? yield* skills.upload(principal, yield* Body.bytes(request, Archive.defaultLimits.maxArchiveBytes, tooLarge))
          : yield* skills.add(principal, yield* body(AddSkill))
        return Kit.created({ success: true, skill: toWire(skill) })
      }))

    yield* route("DELETE", "/v0/skills/:skill", { summary: "Remove a skill from the library", response: { schema: Schema.Struct({ success: Schema.Boolean, message: Schema.String, wasInLibrary: Schema.Boolean }) }, errors: [new Skill.SkillInUse({ skillId: "", agents: [] })] }, ({ principal, params }) =>
      Effect.map(skills.remove(principal, params["skill"] ?? ""), ({ wasInLibrary }) => ({
        success: true,
        message: wasInLibrary ? "Skill removed from the library" : "Skill was not in the library",
        wasInLibrary
      })))

    yield* route("GET", "/v0/clawhub", { summary: "Browse the skill hub", query: HubQuery, errors: [hubUnavailable], response: { schema: Schema.Struct({ skills: Schema.Array(HubSkillWire), nextCursor: Schema.NullOr(Schema.String) }) } }, ({ principal, request }) =>
      Effect.gen(function*() {
        const query = yield* Schema.decodeUnknownEffect(HubQuery)(Object.fromEntries(new URL(request.url, "http://x").searchParams))
        const page = yield* skills.hubSearch(principal, query)
        return { skills: page.skills.map(hubWire), nextCursor: page.nextCursor }
      }))

    yield* route("GET", "/v0/clawhub/:slug", { summary: "Look up a hub skill", response: { schema: Schema.Struct({ skill: HubSkillWire }) }, errors: [new Skill.SkillNotFound({ skill: "" }), hubNotFound, hubUnavailable] }, ({ principal, params }) =>
      Effect.map(skills.hubGet(principal, params["slug"] ?? ""), (skill) => ({ skill: hubWire(skill) })))

    yield* route("POST", "/v0/clawhub/:slug/install", { summary: "Install a hub skill into the library", response: { status: 201, schema: SkillAdded }, errors: [new Skill.SkillNotFound({ skill: "" }), new Skill.SkillAlreadyInLibrary({ name: "" }), hubNotFound, hubUnavailable] }, ({ principal, params }) =>
      Effect.map(skills.installFromHub(principal, params["slug"] ?? ""), (skill) => Kit.created({ success: true, skill: toWire(skill) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/skills", { summary: "List the agent's skills (or as they were: `?at=`)", description: atDescription, query: AtQuery, response: { schema: Schema.Struct({ skills: Schema.Array(AgentSkillWire) }) }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, ({ principal, agentId, request }) => {
      const at = Kit.query(request, "at")
      return at === null
        ? Effect.map(skills.ofAgent(principal, agentId), (list) => ({ skills: list.map(agentSkillWire) }))
        : agentsAt.at(principal, agentId, at).pipe(
          Effect.flatMap((found) => skills.withSigners(found.skills)),
          Effect.map((held) => ({ skills: held.map(agentSkillWire) }))
        )
    })

    yield* agentRoute("POST", "/v0/agents/:agentId/skills", { summary: "Attach skills to the agent (at most 10)", body: { schema: AttachSkills }, response: { schema: Schema.Struct({ success: Schema.Boolean, attached: Schema.Int }) }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Skill.SkillNotFound({ skill: "" })] }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const given = yield* body(AttachSkills)
        const skillCids = given.skillCids ?? given.skills
        if (skillCids === undefined || (given.skillCids !== undefined && given.skills !== undefined)) {
          return yield* new ValidationFailed({ detail: "give the skills to attach as skillCids (or skills): CIDs or ids of library skills" })
        }
        return { success: true, attached: yield* skills.attach(principal, agentId, skillCids) }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/skills/:skillId", { summary: "Detach a skill", response: { schema: Kit.Done }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.SkillNotAttached({ skillId: "" })] }, ({ principal, agentId, params }) =>
      Effect.as(skills.detach(principal, agentId, params["skillId"] ?? ""), { success: true, message: "Skill detached" }))

    yield* agentRoute("GET", "/v0/agents/:agentId/skills/updates", { summary: "The agent's skills that have updates", response: { schema: Schema.Struct({ updates: Schema.Array(SkillUpdateWire) }) }, errors: [new Agent.AgentNotFound({ agentId: "" })] }, ({ principal, agentId }) =>
      Effect.map(skills.updates(principal, agentId), (updates) => ({ updates: updates.map(skillUpdateWire) })))

    yield* agentRoute("POST", "/v0/agents/:agentId/skills/:skillId/update", { summary: "Move an attached skill to another version", body: { schema: UpdateSkill }, response: { schema: SkillMoved }, errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.SkillNotAttached({ skillId: "" }), new Skill.SkillVersionConflict({ skillId: "", changedFiles: [] })] }, ({ principal, agentId, params, body }) =>
      Effect.gen(function*() {
        const input = yield* body(UpdateSkill)
        const { updated, skill } = yield* skills.update(principal, agentId, params["skillId"] ?? "", input)
        return {
          success: true,
          updated,
          message: updated ? `Skill ${skill.name} moved to ${skill.version ?? `revision ${skill.revision}`}` : "Skill already at that version",
          skill: { skillId: skill.skillId, skillCid: skill.cid, name: skill.name, version: skill.version ?? null }
        }
      }))
  })
)

const hubWire = (skill: HubSkill & { readonly installed: boolean }): typeof HubSkillWire.Type => ({
  hubSkillId: skill.slug,
  slug: skill.slug,
  name: skill.name,
  description: skill.summary,
  longDescription: skill.summary,
  version: skill.version,
  authorName: skill.owner,
  category: skill.category,
  tags: skill.tags,
  envVars: [],
  featured: skill.featured,
  installCount: skill.installs,
  installed: skill.installed,
  createdAt: skill.createdAt,
  updatedAt: skill.updatedAt
})
