/**
 * Workspace skill libraries and the skills agents hold. A library skill is a folder on the public IPFS network
 * (registered from a stored CID, uploaded as an archive, or installed from the skill hub); a folder whose SKILL.md
 * names a skill already in the library becomes its next version. Attaching decides on the agent's stream (at most
 * 10) and on each skill's stream (so a removal can refuse while attached), then installs the folder into the
 * agent's workspace through the engine; an install that fails is undone in the log, so the two never disagree.
 * Updates refuse to overwrite files changed inside the agent unless forced.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { ContentStore } from "@cairn/content-store"
import { Agent, Reservation, Skill, ValidationFailed } from "@cairn/domain"
import { Archive, type HubSkill, SkillHub } from "@cairn/skill-hub"
import { Context, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as Semver from "semver"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision, type Loaded } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as SignaturesTable from "../readmodels/SignaturesTable.ts"
import * as SkillsTable from "../readmodels/SkillsTable.ts"
import * as SkillFolder from "./SkillFolder.ts"

/**
 * The wallets (0x addresses) whose EIP-712 signature over a skill version's folder CID lets it be attached and
 * installed (`SKILLS_TRUSTED_SIGNERS`); empty: no signature is required.
 */
export const TrustedSkillSigners = Context.Reference<ReadonlyArray<string>>("cairn/Skills/TrustedSigners", { defaultValue: () => [] })

export type { AgentSkillView, SkillView } from "../readmodels/SkillsTable.ts"

/** What `POST /v0/skills` accepts beside the folder's CID. */
export interface AddInput {
  readonly skillCid?: unknown
  readonly name?: unknown
  readonly description?: unknown
}

/** An attached skill the library or the hub has a newer version of. */
export interface SkillUpdate {
  readonly skillId: string
  readonly name: string
  readonly currentVersion: string | null
  readonly currentCid: string
  readonly latestVersion: string | null
  /** Null when the newer version is on the hub and not yet in the library (an update fetches it). */
  readonly latestCid: string | null
  readonly source: Skill.Source
}

const activeSkill = (state: Skill.SkillState) => (state as Extract<Skill.SkillState, { _tag: "Active" }>).skill

const isNewer = (candidate: string | undefined, than: string | undefined) =>
  candidate !== undefined && (than === undefined || (Semver.valid(candidate) !== null && Semver.valid(than) !== null
    ? Semver.gt(candidate, than)
    : candidate !== than))

const attachedOf = (skill: Skill.Skill, version: Skill.SkillVersion): Agent.AttachedSkill => ({
  skillId: skill.skillId,
  name: skill.name,
  cid: version.cid,
  revision: version.revision,
  ...(version.version === undefined ? {} : { version: version.version })
})

export class Skills extends Context.Service<Skills>()("cairn/Skills", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const content = yield* ContentStore
    const engine = yield* AgentEngine
    const hub = yield* SkillHub
    const table = SkillsTable.queries(yield* SqlClient.SqlClient)
    const signatures = SignaturesTable.queries(yield* SqlClient.SqlClient)
    const trustedSigners = (yield* TrustedSkillSigners).map((address) => address.toLowerCase())

    const loadVisible = (workspaceId: string, skillId: string) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Skill.decider, Skill.stream(skillId))
        const skill = yield* Effect.fromResult(Skill.visible(loaded.state, skillId, workspaceId))
        return { loaded, skill }
      })

    /**
     * With `SKILLS_TRUSTED_SIGNERS` set, a version is attached or installed only when its folder CID is signed by one
     * of them (hub installs answer to the hub's security verdict instead); with it unset, any version is.
     */
    const requireTrusted = (skill: Skill.Skill, attached: Agent.AttachedSkill) =>
      Effect.gen(function*() {
        if (trustedSigners.length === 0 || skill.source === "clawhub") return
        const signer = yield* signatures.publicSigner(attached.cid)
        if (signer === null || !trustedSigners.includes(signer.toLowerCase())) {
          return yield* new Skill.UntrustedSkill({ name: skill.name, cid: attached.cid, signer })
        }
      })

    /** An agent's skills (as a time travel folds them) with who signed each version, as the signatures are now. */
    const withSigners = (held: ReadonlyArray<SkillsTable.AgentSkillView>) =>
      Effect.forEach(held, (skill) => Effect.map(signatures.publicSigner(skill.skillCid), (signedBy) => ({ ...skill, signedBy })))

    const viewOf = (skill: Skill.Skill, signedBy: string | null): SkillsTable.SkillView => {
      const latest = Skill.current(skill)
      return {
        skillId: skill.skillId,
        skillCid: latest.cid,
        name: skill.name,
        description: skill.description,
        createdAt: skill.createdAt,
        updatedAt: skill.updatedAt,
        userId: skill.userId,
        envVars: skill.envVars,
        version: latest.version ?? null,
        revision: latest.revision,
        source: skill.source,
        slug: skill.slug ?? null,
        fileId: null,
        signedBy
      }
    }

    /**
     * Records a checked folder in the workspace's library: a new skill, or the next version of the skill its name
     * already belongs to. `existing: "refuse"` (hub installs) answers 409 instead when the name is taken.
     */
    const register = (
      principal: Principal,
      folder: { readonly cid: string; readonly manifest: SkillFolder.SkillManifest; readonly source: Skill.Source; readonly slug?: string; readonly version?: string },
      existing: "version" | "refuse"
    ) =>
      Effect.gen(function*() {
        const { workspaceId, userId } = principal
        const { manifest } = folder
        const version = folder.version ?? manifest.version
        const at = yield* now
        const skillId = crypto.randomUUID()
        const [outcome] = yield* commands.executePlan(Effect.gen(function*() {
          const reservation = yield* commands.load(Reservation.decider, Skill.nameReservation(workspaceId, manifest.name))
          if (reservation.state._tag === "Held") {
            if (existing === "refuse") return yield* new Skill.SkillAlreadyInLibrary({ name: manifest.name })
            const owner = reservation.state.owner
            const loaded = yield* commands.load(Skill.decider, Skill.stream(owner))
            return [decision(Skill.decider, Skill.stream(owner), new Skill.AddSkillVersion({
              skillId: owner, workspaceId, cid: folder.cid, ...(version === undefined ? {} : { version }),
              description: manifest.description, envVars: manifest.envVars, at
            }), loaded)] as const
          }
          return [
            decision(Skill.decider, Skill.stream(skillId), new Skill.AddSkill({
              skillId, workspaceId, userId, name: manifest.name, description: manifest.description, envVars: manifest.envVars,
              source: folder.source, ...(folder.slug === undefined ? {} : { slug: folder.slug }), cid: folder.cid,
              ...(version === undefined ? {} : { version }), at
            })),
            decision(Reservation.decider, Skill.nameReservation(workspaceId, manifest.name), new Reservation.ClaimReservation({ owner: skillId, at }), reservation)
          ] as const
        }), { actor: userId })
        const registered = activeSkill(outcome.state)
        return viewOf(registered, yield* signatures.publicSigner(Skill.current(registered).cid))
      })

    /** Checks a folder's files and stores them as one directory on the public network. */
    const store = (files: ReadonlyArray<SkillFolder.FolderFile>) =>
      Effect.gen(function*() {
        const manifest = yield* Effect.fromResult(SkillFolder.manifestOf(files))
        const { cid } = yield* content.addDirectory(files, { network: "public" })
        return { cid, manifest }
      })

    const add = Effect.fn("Skills.add")(function*(principal: Principal, input: AddInput) {
      const cid = input.skillCid
      if (typeof cid !== "string" || cid.trim() === "") return yield* new ValidationFailed({ detail: "skillCid is required" })
      const files = yield* SkillFolder.readFromStore(content, cid.trim())
      const manifest = yield* Effect.fromResult(SkillFolder.manifestOf(files))
      if (input.name !== undefined && input.name !== manifest.name) {
        return yield* new ValidationFailed({ detail: `name "${String(input.name)}" differs from SKILL.md's name "${manifest.name}"` })
      }
      const description = typeof input.description === "string" && input.description.trim() !== "" ? input.description.trim() : manifest.description
      return yield* register(principal, { cid: cid.trim(), manifest: { ...manifest, description }, source: "cid" }, "version")
    })

    /** A skill folder uploaded as a zip or a gzipped tar. */
    const upload = Effect.fn("Skills.upload")(function*(principal: Principal, archive: Uint8Array) {
      const files = yield* Archive.read(archive)
      const { cid, manifest } = yield* store(files)
      return yield* register(principal, { cid, manifest, source: "upload" }, "version")
    })

    const list = (principal: Principal) => table.inWorkspace(principal.workspaceId)

    /** A skill by id, or by the CID of any of its versions; undefined when the library has neither. */
    const resolve = (workspaceId: string, skillIdOrCid: string) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Skill.decider, Skill.stream(skillIdOrCid))
        if (Result.isSuccess(Skill.visible(loaded.state, skillIdOrCid, workspaceId))) return skillIdOrCid
        return (yield* table.byCid(workspaceId, skillIdOrCid))?.skillId
      })

    const remove = Effect.fn("Skills.remove")(function*(principal: Principal, skillIdOrCid: string) {
      const { workspaceId, userId } = principal
      const skillId = yield* resolve(workspaceId, skillIdOrCid)
      if (skillId === undefined) return { wasInLibrary: false }
      const at = yield* now
      yield* commands.executePlan(Effect.gen(function*() {
        const { loaded, skill } = yield* loadVisible(workspaceId, skillId)
        return [
          decision(Skill.decider, Skill.stream(skillId), new Skill.RemoveSkill({ skillId, workspaceId, at }), loaded),
          decision(Reservation.decider, Skill.nameReservation(workspaceId, skill.name), new Reservation.ReleaseReservation({ owner: skillId, at }))
        ] as const
      }), { actor: userId })
      return { wasInLibrary: true }
    })

    const liveAgent = (loaded: Loaded<Agent.AgentState>, agentId: string, workspaceId: string) =>
      Effect.fromResult(Agent.visible(loaded.state, agentId, workspaceId))

    /** The folder of an attached version, from the content store. */
    const folderOf = (attached: Agent.AttachedSkill) =>
      Effect.map(SkillFolder.readFromStore(content, attached.cid), (files) => ({ name: attached.name, files }))

    /**
     * Puts the skill's folder into the agent's workspace. An agent this node's engine does not hold yet (its
     * gateway is provisioned elsewhere, or not yet) gets it when it is next started (`ensureInstalled`).
     */
    const install = (agentId: string, attached: Agent.AttachedSkill) =>
      Effect.flatMap(folderOf(attached), (folder) => engine.installSkill(agentId, folder)).pipe(
        Effect.catchTag("AgentNotProvisioned", () => Effect.void)
      )

    /**
     * The decisions that attach library skills, named by the CIDs of their versions (or by their ids: their current
     * version), to an agent on the skills' side, and the skills as the agent will hold them. A CID or id no library
     * skill has is 404.
     */
    const attachments = (workspaceId: string, agentId: string, agentName: string, skillCids: ReadonlyArray<string>, at: string) =>
      Effect.gen(function*() {
        const held = yield* Effect.forEach([...new Set(skillCids)], (cid) =>
          Effect.gen(function*() {
            const found = yield* table.byCid(workspaceId, cid)
            if (found === undefined) {
              // Not a version's CID: a library skill's id (the interface's own reading), attached at its current version.
              const { loaded, skill } = yield* loadVisible(workspaceId, cid).pipe(
                Effect.catchTag("SkillNotFound", () => Effect.fail(new Skill.SkillNotFound({ skill: cid })))
              )
              return { loaded, skill, attached: attachedOf(skill, Skill.current(skill)) }
            }
            const { loaded, skill } = yield* loadVisible(workspaceId, found.skillId)
            const version = skill.versions.find((v) => v.revision === found.revision) ?? Skill.current(skill)
            return { loaded, skill, attached: attachedOf(skill, version) }
          }).pipe(Effect.tap(({ skill, attached }) => requireTrusted(skill, attached))))
        return {
          skills: held.map((h) => h.attached),
          decisions: held.map(({ loaded, skill }) =>
            decision(Skill.decider, Skill.stream(skill.skillId), new Skill.AttachSkill({ skillId: skill.skillId, workspaceId, agentId, agentName, at }), loaded)
          )
        }
      })

    const detachDecisions = (workspaceId: string, agentId: string, skillId: string, at: string, agent: Loaded<Agent.AgentState>) =>
      Effect.map(commands.load(Skill.decider, Skill.stream(skillId)), (loaded) => [
        decision(Agent.decider, Agent.stream(agentId), new Agent.DetachSkill({ agentId, workspaceId, skillId, at }), agent),
        decision(Skill.decider, Skill.stream(skillId), new Skill.DetachSkill({ skillId, workspaceId, agentId, at }), loaded)
      ] as const)

    const attach = Effect.fn("Skills.attach")(function*(principal: Principal, agentId: string, skillCids: ReadonlyArray<string>) {
      const { workspaceId, userId } = principal
      const at = yield* now
      const [outcome] = yield* commands.executePlan(Effect.gen(function*() {
        const loaded = yield* commands.load(Agent.decider, Agent.stream(agentId))
        const agent = yield* liveAgent(loaded, agentId, workspaceId)
        const { skills, decisions } = yield* attachments(workspaceId, agentId, agent.name, skillCids, at)
        return [decision(Agent.decider, Agent.stream(agentId), new Agent.AttachSkills({ agentId, workspaceId, skills, at }), loaded), ...decisions] as const
      }), { actor: userId })
      const added = outcome.events.flatMap((e) => (e._tag === "AgentSkillsAttached" ? e.skills : []))
      yield* Effect.forEach(added, (skill) =>
        install(agentId, skill).pipe(Effect.tapError(() => undoAttach(principal, agentId, skill))), { discard: true })
      return new Set(skillCids).size
    })

    /** Takes back an attachment whose folder could not be installed, so the log says what the workspace has. */
    const undoAttach = (principal: Principal, agentId: string, skill: Agent.AttachedSkill) =>
      Effect.gen(function*() {
        const at = yield* now
        yield* commands.executePlan(Effect.flatMap(commands.load(Agent.decider, Agent.stream(agentId)), (agent) =>
          detachDecisions(principal.workspaceId, agentId, skill.skillId, at, agent)), { actor: "system" })
        yield* engine.removeSkill(agentId, skill.name)
      }).pipe(Effect.ignore)

    const detach = Effect.fn("Skills.detach")(function*(principal: Principal, agentId: string, skillId: string) {
      const { workspaceId, userId } = principal
      const at = yield* now
      let held: Agent.AttachedSkill | undefined
      yield* commands.executePlan(Effect.gen(function*() {
        const agent = yield* commands.load(Agent.decider, Agent.stream(agentId))
        held = (yield* liveAgent(agent, agentId, workspaceId)).skills.get(skillId)
        // A skill the agent does not hold: 404 when the library has no such skill either, else nothing to do.
        if (held === undefined) yield* loadVisible(workspaceId, skillId)
        return yield* detachDecisions(workspaceId, agentId, skillId, at, agent)
      }), { actor: userId })
      if (held !== undefined) yield* engine.removeSkill(agentId, held.name).pipe(Effect.catchTag("AgentNotProvisioned", () => Effect.void))
    })

    const ofAgent = Effect.fn("Skills.ofAgent")(function*(principal: Principal, agentId: string) {
      yield* liveAgent(yield* commands.load(Agent.decider, Agent.stream(agentId)), agentId, principal.workspaceId)
      return yield* table.ofAgent(agentId)
    })

    /** The hub's newest version of a hub skill; undefined when the hub cannot say (it is down, or dropped the skill). */
    const hubLatest = (skill: { readonly source: Skill.Source; readonly slug: string | null | undefined }) =>
      skill.source === "clawhub" && skill.slug !== null && skill.slug !== undefined
        ? hub.get(skill.slug).pipe(
          Effect.map((found) => found.version),
          Effect.catch((error) => Effect.logWarning("Skill hub lookup failed", error).pipe(Effect.as(undefined)))
        )
        : Effect.succeed(undefined)

    const updates = Effect.fn("Skills.updates")(function*(principal: Principal, agentId: string) {
      const held = yield* ofAgent(principal, agentId)
      const found = yield* Effect.forEach(held, (skill) =>
        Effect.map(hubLatest(skill), (hubVersion): SkillUpdate | undefined => {
          const base = { skillId: skill.skillId, name: skill.name, currentVersion: skill.version, currentCid: skill.skillCid, source: skill.source }
          if (isNewer(hubVersion, skill.latestVersion ?? undefined) && isNewer(hubVersion, skill.version ?? undefined)) {
            return { ...base, latestVersion: hubVersion!, latestCid: null }
          }
          return skill.latestRevision > skill.revision ? { ...base, latestVersion: skill.latestVersion, latestCid: skill.latestCid } : undefined
        }), { concurrency: 4 })
      return found.filter((u): u is SkillUpdate => u !== undefined)
    })

    /** Brings a hub version into the library (as the skill's next version) unless the library has it already. */
    const fetchFromHub = (principal: Principal, skill: Skill.Skill, version: string | undefined) =>
      Effect.gen(function*() {
        const bundle = yield* hub.download(skill.slug!, version)
        const known = skill.versions.find((v) => v.version === bundle.version)
        if (known !== undefined) return
        const { cid, manifest } = yield* store(bundle.files)
        if (manifest.name !== skill.name) {
          return yield* new ValidationFailed({ detail: `the hub's ${skill.slug}@${bundle.version} is named "${manifest.name}", not "${skill.name}"` })
        }
        yield* register(principal, { cid, manifest, source: "clawhub", slug: skill.slug!, version: bundle.version }, "version").pipe(
          Effect.catchTag("SkillAlreadyInLibrary", () => Effect.void)
        )
      })

    /** The library version an update moves to: the one named, or the newest (fetched from the hub when it is newer there). */
    const target = (principal: Principal, skill: Skill.Skill, version: string | undefined) =>
      Effect.gen(function*() {
        const isHub = skill.source === "clawhub" && skill.slug !== undefined
        const inLibrary = version === undefined ? undefined : skill.versions.findLast((v) => v.version === version)
        if (inLibrary !== undefined) return inLibrary
        if (isHub) {
          const latest = version ?? (yield* hubLatest(skill))
          if (latest !== undefined && (version !== undefined || isNewer(latest, Skill.current(skill).version))) {
            yield* fetchFromHub(principal, skill, latest)
          }
        }
        const { skill: refreshed } = yield* loadVisible(principal.workspaceId, skill.skillId)
        const found = version === undefined ? Skill.current(refreshed) : refreshed.versions.findLast((v) => v.version === version)
        if (found === undefined) return yield* new ValidationFailed({ detail: `skill ${skill.name} has no version ${version}` })
        return found
      })

    const update = Effect.fn("Skills.update")(function*(
      principal: Principal,
      agentId: string,
      skillId: string,
      input: { readonly version?: unknown; readonly force?: unknown }
    ) {
      const { workspaceId, userId } = principal
      if (input.version !== undefined && typeof input.version !== "string") return yield* new ValidationFailed({ detail: "version must be a string" })
      if (input.force !== undefined && typeof input.force !== "boolean") return yield* new ValidationFailed({ detail: "force must be a boolean" })
      const agent = yield* liveAgent(yield* commands.load(Agent.decider, Agent.stream(agentId)), agentId, workspaceId)
      const { skill } = yield* loadVisible(workspaceId, skillId)
      const held = agent.skills.get(skillId)
      if (held === undefined) return yield* new Agent.SkillNotAttached({ skillId })
      const next = yield* target(principal, skill, input.version)
      if (next.revision === held.revision) return { updated: false, skill: held }
      // Files edited inside the agent would be lost: refuse unless the caller says so.
      if (input.force !== true) {
        const expected = yield* folderOf(held)
        const actual = (yield* engine.readSkill(agentId, held.name)) ?? []
        const changed = SkillFolder.changedPaths(expected.files, actual)
        if (changed.length > 0) return yield* new Skill.SkillVersionConflict({ skillId, changedFiles: changed })
      }
      const moved = attachedOf(skill, next)
      yield* requireTrusted(skill, moved)
      const folder = yield* folderOf(moved)
      const record = (to: Agent.AttachedSkill) =>
        Effect.flatMap(now, (at) =>
          commands.execute(Agent.decider, Agent.stream(agentId), new Agent.UpdateSkill({ agentId, workspaceId, skill: to, at }), { actor: userId }))
      yield* record(moved)
      // The engine swaps the folder whole; if it cannot, the log goes back to the version the workspace still has.
      yield* engine.installSkill(agentId, folder).pipe(Effect.tapError(() => record(held).pipe(Effect.ignore)))
      return { updated: true, skill: moved }
    })

    /** Installs from the hub into the library: 409 when a skill of that name is already there. */
    const installFromHub = Effect.fn("Skills.installFromHub")(function*(principal: Principal, slug: string) {
      const bundle = yield* hub.download(slug)
      const { cid, manifest } = yield* store(bundle.files)
      return yield* register(principal, { cid, manifest, source: "clawhub", slug: bundle.slug, version: bundle.version }, "refuse")
    })

    /**
     * The library CIDs of a template's skills, bringing in what the library lacks: a stored folder is registered,
     * a hub slug installed (a skill the library already has from that slug is used as it is).
     */
    const forTemplate = Effect.fn("Skills.forTemplate")(function*(
      principal: Principal,
      included: ReadonlyArray<{ readonly cid?: string | undefined; readonly clawhubSlug?: string | undefined }>
    ) {
      const library = yield* table.inWorkspace(principal.workspaceId)
      return yield* Effect.forEach(included, (skill) =>
        Effect.gen(function*() {
          if (skill.cid !== undefined) {
            if ((yield* table.byCid(principal.workspaceId, skill.cid)) !== undefined) return skill.cid
            return (yield* add(principal, { skillCid: skill.cid })).skillCid
          }
          const held = library.find((s) => s.slug === skill.clawhubSlug)
          return held !== undefined ? held.skillCid : (yield* installFromHub(principal, skill.clawhubSlug ?? "")).skillCid
        }))
    })

    /** Hub listings, each marked with whether the caller's library has it. */
    const hubSearch = Effect.fn("Skills.hubSearch")(function*(principal: Principal, query: Parameters<typeof hub.search>[0]) {
      const page = yield* hub.search(query)
      const installed = yield* installedSlugs(principal.workspaceId)
      return { skills: page.skills.map((s) => ({ ...s, installed: installed.has(s.slug) })), nextCursor: page.nextCursor }
    })

    const hubGet = Effect.fn("Skills.hubGet")(function*(principal: Principal, slug: string) {
      const skill: HubSkill = yield* hub.get(slug)
      const installed = yield* installedSlugs(principal.workspaceId)
      return { ...skill, installed: installed.has(skill.slug) }
    })

    const installedSlugs = (workspaceId: string) =>
      Effect.map(table.inWorkspace(workspaceId), (skills) => new Set(skills.flatMap((s) => (s.slug === null ? [] : [s.slug]))))

    /**
     * Puts back any attached skill missing from the agent's workspace (an install interrupted by a crash, a home
     * restored from elsewhere): the supervisor calls it before every start.
     */
    const ensureInstalled = (agent: Agent.Agent) =>
      Effect.forEach(agent.skills.values(), (attached) =>
        Effect.flatMap(engine.readSkill(agent.agentId, attached.name), (present) =>
          present === undefined ? install(agent.agentId, attached) : Effect.void), { discard: true })

    /** The decisions that let go of every skill an agent holds, for its deletion. */
    const releaseAll = (agent: Agent.Agent, at: string) =>
      [...agent.skills.keys()].map((skillId) =>
        decision(Skill.decider, Skill.stream(skillId), new Skill.DetachSkill({ skillId, workspaceId: agent.workspaceId, agentId: agent.agentId, at }))
      )

    return {
      registry: hub.registry,
      add, upload, list, remove, attachments, forTemplate, attach, detach, ofAgent, updates, update, installFromHub, hubSearch, hubGet,
      ensureInstalled, releaseAll, install, withSigners
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
