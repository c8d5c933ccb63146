/**
 * `/v0/skills` (the workspace's library: register a stored folder CID or upload an archive, list, delete), the
 * hub (`/v0/clawhub`: browse, look up, install into the library) and an agent's skills (attach up to 10, list,
 * detach, see and apply updates).
 */
import { type AgentSkillView, Skills, type SkillView } from "@cairn/application"
import { ValidationFailed } from "@cairn/domain"
import { Archive, type HubSkill } from "@cairn/skill-hub"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Body from "../Body.ts"
import * as Kit from "./Kit.ts"

// Fields are checked by the service, so a missing or malformed one gets its own `Validation failed` detail.
const AddSkill = Schema.Struct({
  skillCid: Schema.optional(Schema.Unknown),
  name: Schema.optional(Schema.Unknown),
  description: Schema.optional(Schema.Unknown)
})
const AttachSkills = Schema.Struct({
  skillCids: Schema.Array(Schema.String).pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(100)))
})
const UpdateSkill = Schema.Struct({ version: Schema.optional(Schema.Unknown), force: Schema.optional(Schema.Unknown) })

const archiveTypes = ["application/zip", "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/octet-stream"]

const tooLarge = () => new ValidationFailed({ detail: `the archive is larger than ${Archive.defaultLimits.maxArchiveBytes / 1024 / 1024} MiB` })

const hubSort = Schema.Literals(["popular", "newest", "name"])
const HubQuery = Schema.Struct({
  q: Schema.optionalKey(Schema.String),
  category: Schema.optionalKey(Schema.String),
  sort: Schema.optionalKey(hubSort),
  cursor: Schema.optionalKey(Schema.String),
  limit: Schema.optionalKey(Schema.NumberFromString.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))))
})

const toWire = (skill: SkillView) => skill

const agentSkillWire = (skill: AgentSkillView) => ({
  skillId: skill.skillId,
  skillCid: skill.skillCid,
  name: skill.name,
  description: skill.description,
  version: skill.version,
  source: skill.source,
  slug: skill.slug,
  attachedAt: skill.attachedAt,
  updatedAt: skill.updatedAt,
  updateAvailable: skill.latestRevision > skill.revision
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const skills = yield* Skills

    yield* route("GET", "/v0/skills", ({ principal }) =>
      Effect.map(skills.list(principal), (list) => ({ skills: list.map(toWire), currentUserId: principal.userId })))

    yield* route("POST", "/v0/skills", ({ principal, request, body }) =>
      Effect.gen(function*() {
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        const skill = archiveTypes.includes(type)
          ? yield* skills.upload(principal, yield* Body.bytes(request, Archive.defaultLimits.maxArchiveBytes, tooLarge))
          : yield* skills.add(principal, yield* body(AddSkill))
        return Kit.created({ success: true, skill: toWire(skill) })
      }))

    yield* route("DELETE", "/v0/skills/:skill", ({ principal, params }) =>
      Effect.map(skills.remove(principal, params["skill"] ?? ""), ({ wasInLibrary }) => ({
        success: true,
        message: wasInLibrary ? "Skill removed from the library" : "Skill was not in the library",
        wasInLibrary
      })))

    yield* route("GET", "/v0/clawhub", ({ principal, request }) =>
      Effect.gen(function*() {
        const query = yield* Schema.decodeUnknownEffect(HubQuery)(Object.fromEntries(new URL(request.url, "http://x").searchParams))
        const page = yield* skills.hubSearch(principal, query)
        return { skills: page.skills.map(hubWire), nextCursor: page.nextCursor }
      }))

    yield* route("GET", "/v0/clawhub/:slug", ({ principal, params }) =>
      Effect.map(skills.hubGet(principal, params["slug"] ?? ""), (skill) => ({ skill: hubWire(skill) })))

    yield* route("POST", "/v0/clawhub/:slug/install", ({ principal, params }) =>
      Effect.map(skills.installFromHub(principal, params["slug"] ?? ""), (skill) => Kit.created({ success: true, skill: toWire(skill) })))

    yield* agentRoute("GET", "/v0/agents/:agentId/skills", ({ principal, agentId }) =>
      Effect.map(skills.ofAgent(principal, agentId), (list) => ({ skills: list.map(agentSkillWire) })))

    yield* agentRoute("POST", "/v0/agents/:agentId/skills", ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const { skillCids } = yield* body(AttachSkills)
        return { success: true, attached: yield* skills.attach(principal, agentId, skillCids) }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/skills/:skillId", ({ principal, agentId, params }) =>
      Effect.as(skills.detach(principal, agentId, params["skillId"] ?? ""), { success: true, message: "Skill detached" }))

    yield* agentRoute("GET", "/v0/agents/:agentId/skills/updates", ({ principal, agentId }) =>
      Effect.map(skills.updates(principal, agentId), (updates) => ({ updates })))

    yield* agentRoute("POST", "/v0/agents/:agentId/skills/:skillId/update", ({ principal, agentId, params, body }) =>
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

/** A hub listing in the shape Pinata's clients read (`HubSkill`), plus the version and whether it is installed. */
const hubWire = (skill: HubSkill & { readonly installed: boolean }) => ({
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
