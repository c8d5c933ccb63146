/**
 * The template catalog: publish a template folder (from git, from a folder already stored on IPFS, or as files
 * from the admin API or Cairn's shipped catalog), validate one without publishing it, list and look templates up,
 * publish new versions, archive, and `materialize` one for an agent's creation. A folder is checked
 * (`@cairn/templates`: manifest v1 with ajv, safe paths, limits) before anything is stored; it is stored as one
 * UnixFS directory on the public network, and its slug is claimed on the reservation stream in the same append as
 * the publish, so slugs are unique across the catalog.
 *
 * Visibility: a workspace's templates are seen by that workspace only; the admin API's and the shipped ones are
 * public. Git repositories on this machine or its networks (a path, `file://`, loopback and private addresses) are
 * read only for an operator, or for everyone when the installation sets `TEMPLATES_ALLOW_LOCAL_GIT=true`
 * (`AllowLocalGit`): otherwise a user could make the server read its own disk or internal services.
 */
import { ContentStore, type ContentStoreUnavailable, type ContentTimeout } from "@cairn/content-store"
import { Reservation, Template, ValidationFailed } from "@cairn/domain"
import {
  GitRepositories,
  listingOf,
  type Manifest,
  manifestPath,
  maxFiles,
  maxTotalBytes,
  type TemplateFile,
  validateTemplate
} from "@cairn/templates"
import { Context, Effect, Layer, Option, Result, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as SignaturesTable from "../readmodels/SignaturesTable.ts"
import * as TemplatesTable from "../readmodels/TemplatesTable.ts"

export type { TemplateView } from "../readmodels/TemplatesTable.ts"

/**
 * Whether workspaces may publish from git repositories on this machine or its networks. Off by default; the
 * runtime sets it from `TEMPLATES_ALLOW_LOCAL_GIT` (for single-user installations and tests).
 */
export const AllowLocalGit = Context.Reference<boolean>("cairn/Templates/AllowLocalGit", { defaultValue: () => false })

/** A git repository to read a template from (POST/PUT `/v0/templates`, `/v0/templates/validate`). */
export interface GitInput {
  readonly gitUrl: string
  readonly branch?: string | undefined
  readonly ref?: string | undefined
  readonly path?: string | undefined
}

/** Where a template's folder comes from. */
export type Source =
  | { readonly _tag: "Git"; readonly git: GitInput }
  | { readonly _tag: "Cid"; readonly templateCid: string }
  | { readonly _tag: "Files"; readonly files: ReadonlyArray<TemplateFile> }

export interface PublishOptions {
  /** The template's name; the manifest's `agent.name` when left out. */
  readonly name?: string | undefined
  /** Its slug; the manifest's `template.slug`, or one made from the name, when left out. */
  readonly slug?: string | undefined
}

/** What `validate` answers: the checks' verdict, never a failure for an invalid template. */
export interface ValidationReport {
  readonly valid: boolean
  readonly errors: ReadonlyArray<string>
  readonly manifest: Manifest | null
  /** The folder's file paths (`.git/` left out). */
  readonly files: ReadonlyArray<string>
  /** README.md's text, when the folder has one at its root. */
  readonly readme: string | null
  /** The commit read, for a git source. */
  readonly commitSha: string | null
}

/** A workspace file as an agent gets it. */
export interface WorkspaceFile {
  readonly path: string
  readonly content: Uint8Array
}

/** A template ready to become an agent (`materialize`). */
export interface Materialized {
  readonly template: TemplatesTable.TemplateView
  readonly manifest: Manifest
  /**
   * The files to write into the agent's workspace, at workspace-relative paths. A folder in Pinata's layout (its
   * workspace files under `workspace/`) gives those, with the prefix taken off; any other folder gives every file
   * but manifest.json.
   */
  readonly files: ReadonlyArray<WorkspaceFile>
  /**
   * The folder's other files in Pinata's layout (README.md, setup scripts the manifest's `scripts` run from the
   * agent's root), at folder-relative paths; empty otherwise. manifest.json is never among them.
   */
  readonly rootFiles: ReadonlyArray<WorkspaceFile>
}

/** How one shipped template fared at startup. */
export interface ShippedOutcome {
  readonly slug: string
  readonly outcome: "published" | "updated" | "unchanged" | "archived" | "taken" | "invalid"
  readonly templateId?: string
}

export interface ListFilter {
  readonly featured?: boolean | undefined
  readonly category?: string | undefined
  /** `me`: only the caller's workspace's templates. */
  readonly submittedBy?: "me" | undefined
}

const text = new TextDecoder()

/** What a template's current state shows, as the endpoints do (without reading the table again). */
const viewOf = (t: Template.Template, signedBy: string | null, status: "published" | "archived" = "published"): TemplatesTable.TemplateView => ({
  templateId: t.templateId,
  name: t.name,
  slug: t.slug,
  version: t.version,
  description: t.description,
  category: t.category,
  tags: t.tags,
  snapshotCid: t.snapshotCid,
  openclawVersion: t.openclawVersion,
  requiredSecrets: t.requiredSecrets,
  includedSkills: t.includedSkills,
  includedSkillCids: t.includedSkills.flatMap((skill) => (skill.cid === undefined ? [] : [skill.cid])),
  featured: t.featured,
  status,
  visibility: t.visibility,
  publisher: t.publisher,
  workspaceId: t.workspaceId,
  gitUrl: t.gitUrl ?? null,
  gitCommitSha: t.gitCommitSha ?? null,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  userId: t.userId,
  signedBy
})

const actorOf = (principal: Principal): Template.Actor => ({ _tag: "Workspace", workspaceId: principal.workspaceId })
const admin: Template.Actor = { _tag: "Admin" }
const cairn: Template.Actor = { _tag: "Cairn" }

/** Whether the caller sees the template (a published one that is public or its workspace's). */
const visibleTo = (view: TemplatesTable.TemplateView, actor: Template.Actor) =>
  view.status === "published" &&
  (view.visibility === "public" || actor._tag === "Admin" || (actor._tag === "Workspace" && view.workspaceId === actor.workspaceId))

const optionalName = (name: unknown): Result.Result<string | undefined, ValidationFailed> =>
  name === undefined
    ? Result.succeed(undefined)
    : typeof name === "string" && name.trim().length >= 1 && name.trim().length <= 100
    ? Result.succeed(name.trim())
    : Result.fail(new ValidationFailed({ detail: "name must be 1 to 100 characters" }))

/** A prepared folder: checked, stored, and the version fields a command records. */
interface Prepared {
  readonly fields: Omit<Template.UpdateTemplate, "_tag" | "templateId" | "actor" | "featured" | "userId" | "at">
}

export class Templates extends Context.Service<Templates>()("cairn/Templates", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const content = yield* ContentStore
    const git = yield* GitRepositories
    const allowLocalGit = yield* AllowLocalGit
    const table = TemplatesTable.queries(yield* SqlClient.SqlClient)
    const signatures = SignaturesTable.queries(yield* SqlClient.SqlClient)

    const notAFolder = (cid: string) => new Template.InvalidTemplate({ errors: [`templateCid ${cid} is not a folder stored on the public network`] })

    const bytesOf = (cid: string) =>
      content.cat(cid, "public").pipe(
        Stream.runFold(() => [] as Array<Uint8Array>, (chunks, chunk) => {
          chunks.push(chunk)
          return chunks
        }),
        Effect.map((chunks) => {
          const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
          let offset = 0
          for (const chunk of chunks) {
            bytes.set(chunk, offset)
            offset += chunk.byteLength
          }
          return bytes
        })
      )

    /** A stored folder's files, its size and count checked from the listing before any content is read. */
    const readStored = (cid: string): Effect.Effect<Array<TemplateFile>, Template.InvalidTemplate | ContentStoreUnavailable | ContentTimeout> =>
      Effect.gen(function*() {
        const entries = yield* content.walk(cid, "public").pipe(
          Effect.catchTags({ ContentNotFound: () => Effect.fail(notAFolder(cid)), NotADirectory: () => Effect.fail(notAFolder(cid)) })
        )
        const listed = entries.filter((e) => e.kind !== "directory")
        const total = listed.reduce((n, e) => n + e.size, 0)
        if (listed.length > maxFiles) return yield* new Template.InvalidTemplate({ errors: [`template has ${listed.length} files; at most ${maxFiles} are allowed`] })
        if (total > maxTotalBytes) return yield* new Template.InvalidTemplate({ errors: [`template is ${total} bytes; at most ${maxTotalBytes} (20 MiB) are allowed`] })
        return yield* Effect.forEach(listed, (entry) =>
          entry.kind === "symlink"
            ? Effect.succeed<TemplateFile>({ path: entry.path, content: new Uint8Array(), kind: "symlink" })
            : bytesOf(entry.cid).pipe(
              Effect.map((bytes): TemplateFile => ({ path: entry.path, content: bytes })),
              Effect.catchTag("ContentNotFound", () => Effect.fail(notAFolder(cid)))
            ), { concurrency: 8 })
      })

    /** The folder's files, and the commit they were read from for a git source. */
    const read = (source: Source, allowLocal: boolean) =>
      Effect.gen(function*() {
        switch (source._tag) {
          case "Files":
            return { files: source.files, commitSha: undefined }
          case "Cid":
            return { files: yield* readStored(source.templateCid), commitSha: undefined }
          case "Git": {
            const { gitUrl, branch, ref, path } = source.git
            const fetched = yield* git.fetch({
              gitUrl,
              ...(branch === undefined ? {} : { branch }),
              ...(ref === undefined ? {} : { ref }),
              ...(path === undefined ? {} : { path })
            }, { allowLocal }).pipe(Effect.mapError((e) => new Template.InvalidTemplate({ errors: [e.message] })))
            return { files: fetched.files, commitSha: fetched.commitSha }
          }
        }
      })

    /** Reads, checks and stores a folder; the fields a publish or an update records. */
    const prepare = (source: Source, allowLocal: boolean, name: string | undefined) =>
      Effect.gen(function*() {
        const { files, commitSha } = yield* read(source, allowLocal)
        const checked = validateTemplate(files)
        if (!checked.valid || checked.manifest === null) return yield* new Template.InvalidTemplate({ errors: checked.errors })
        const manifest = checked.manifest
        const listing = listingOf(manifest)
        const snapshotCid = source._tag === "Cid"
          ? source.templateCid
          : (yield* content.addDirectory(checked.files.map(({ path, content }) => ({ path, content })), { network: "public" })).cid
        const origin = source._tag === "Git"
          ? {
            gitUrl: source.git.gitUrl,
            ...(commitSha === undefined ? {} : { gitCommitSha: commitSha }),
            ...(source.git.ref ?? source.git.branch) === undefined
              ? {}
              : { gitRef: source.git.ref ?? `refs/heads/${source.git.branch}` },
            ...(source.git.path === undefined ? {} : { gitPath: source.git.path })
          }
          : {}
        const prepared: Prepared = {
          fields: {
            name: name ?? listing.name,
            description: listing.description,
            category: listing.category,
            tags: listing.tags,
            snapshotCid,
            manifest,
            requiredSecrets: listing.requiredSecrets,
            includedSkills: listing.includedSkills,
            openclawVersion: listing.openclawVersion ?? null,
            ...origin
          }
        }
        return { prepared, slugHint: listing.slug }
      })

    const slugFor = (given: string | undefined, hint: string | undefined, name: string) =>
      given !== undefined
        ? Effect.fromResult(Template.validateSlug(given))
        : hint !== undefined && Result.isSuccess(Template.validateSlug(hint))
        ? Effect.succeed(hint)
        : Effect.succeed(Template.slugify(name))

    interface NewTemplate {
      readonly prepared: Prepared
      readonly slug: string
      readonly visibility: Template.Visibility
      readonly featured: boolean
      readonly publisher: Template.Publisher
      readonly workspaceId: string | null
      readonly userId: string
    }

    /** Records a new template and claims its slug, in one append. */
    const publishNew = (t: NewTemplate) =>
      Effect.gen(function*() {
        const templateId = crypto.randomUUID()
        const at = yield* now
        const { _tag, ...command } = new Template.PublishTemplate({
          templateId,
          slug: t.slug,
          ...t.prepared.fields,
          visibility: t.visibility,
          featured: t.featured,
          publisher: t.publisher,
          workspaceId: t.workspaceId,
          userId: t.userId,
          at
        })
        const [, { state }] = yield* commands.executeAll([
          decision(Reservation.decider, Template.slugReservation(t.slug), new Reservation.ClaimReservation({ owner: templateId, at })),
          decision(Template.decider, Template.stream(templateId), new Template.PublishTemplate(command))
        ], { actor: t.userId }).pipe(Effect.catchTag("ReservationTaken", () => Effect.fail(new Template.DuplicateTemplateSlug({ slug: t.slug }))))
        const published = (state as Extract<Template.TemplateState, { _tag: "Published" }>).template
        return viewOf(published, yield* signatures.publicSigner(published.snapshotCid))
      })

    /** Records the prepared folder as the template's next version (nothing when it is the same folder). */
    const publishVersion = (templateId: string, actor: Template.Actor, userId: string, prepared: Prepared, featured?: boolean) =>
      Effect.gen(function*() {
        const command = new Template.UpdateTemplate({
          templateId,
          actor,
          ...prepared.fields,
          ...(featured === undefined ? {} : { featured }),
          userId,
          at: yield* now
        })
        const { state, events } = yield* commands.execute(Template.decider, Template.stream(templateId), command, { actor: userId })
        const published = (state as Extract<Template.TemplateState, { _tag: "Published" }>).template
        return { template: viewOf(published, yield* signatures.publicSigner(published.snapshotCid)), changed: events.length > 0 }
      })

    /** The template that holds a slug, if any: its id and state. */
    const holderOf = (slug: string) =>
      Effect.gen(function*() {
        const { state } = yield* commands.load(Reservation.decider, Template.slugReservation(slug))
        if (state._tag === "Free") return Option.none()
        const loaded = yield* commands.load(Template.decider, Template.stream(state.owner))
        return Option.some({ templateId: state.owner, state: loaded.state })
      })

    // ---- a workspace's calls -------------------------------------------------------------------------------

    const publish = Effect.fn("Templates.publish")(function*(principal: Principal, source: Source, options: PublishOptions = {}) {
      const name = yield* Effect.fromResult(optionalName(options.name))
      const { prepared, slugHint } = yield* prepare(source, allowLocalGit, name)
      const slug = yield* slugFor(options.slug, slugHint, prepared.fields.name)
      return yield* publishNew({
        prepared,
        slug,
        visibility: "workspace",
        featured: false,
        publisher: "workspace",
        workspaceId: principal.workspaceId,
        userId: principal.userId
      })
    })

    const publishFromGit = (principal: Principal, input: GitInput & PublishOptions) =>
      publish(principal, { _tag: "Git", git: input }, { name: input.name, slug: input.slug })

    const publishFromCid = (principal: Principal, input: { readonly templateCid: string } & PublishOptions) =>
      publish(principal, { _tag: "Cid", templateCid: input.templateCid }, { name: input.name, slug: input.slug })

    /** Checks a folder (or a manifest alone) without storing anything; an invalid one is a report, not a failure. */
    const validate = Effect.fn("Templates.validate")(function*(
      _principal: Principal,
      input: Source | { readonly _tag: "Manifest"; readonly manifest: unknown }
    ) {
      const source: Source = input._tag === "Manifest"
        ? { _tag: "Files", files: [{ path: manifestPath, content: new TextEncoder().encode(JSON.stringify(input.manifest)) }] }
        : input
      const report = yield* read(source, allowLocalGit).pipe(
        Effect.map(({ files, commitSha }): ValidationReport => {
          const checked = validateTemplate(files)
          const readme = checked.files.find((f) => f.path === "README.md" && (f.kind ?? "file") === "file")
          return {
            valid: checked.valid,
            errors: checked.errors,
            manifest: checked.manifest,
            files: checked.files.map((f) => f.path),
            readme: readme === undefined ? null : text.decode(readme.content),
            commitSha: commitSha ?? null
          }
        }),
        Effect.catchTag("InvalidTemplate", (e) =>
          Effect.succeed<ValidationReport>({ valid: false, errors: e.errors, manifest: null, files: [], readme: null, commitSha: null }))
      )
      return report
    })

    const listFor = (viewer: TemplatesTable.Viewer, filter: ListFilter, publishedBy: string | undefined) =>
      Effect.gen(function*() {
        const templates = yield* table.list({
          viewer,
          ...(filter.featured === undefined ? {} : { featured: filter.featured }),
          ...(filter.category === undefined ? {} : { category: filter.category }),
          ...(publishedBy === undefined ? {} : { publishedBy })
        })
        return { templates, categories: yield* table.categories(viewer) }
      })

    /** The templates a workspace sees: public ones and its own (only its own with `submittedBy: "me"`). */
    const list = Effect.fn("Templates.list")(function*(principal: Principal, filter: ListFilter = {}) {
      return yield* listFor({ workspaceId: principal.workspaceId }, filter, filter.submittedBy === "me" ? principal.workspaceId : undefined)
    })

    /** The public marketplace: the templates published for every workspace, for anyone. */
    const listPublic = Effect.fn("Templates.listPublic")(function*(filter: Omit<ListFilter, "submittedBy"> = {}) {
      return yield* listFor("anyone", filter, undefined)
    })

    /** The branches and tags of a repository a template could be published from (the same locations publish allows). */
    const repositoryRefs = (gitUrl: string) =>
      git.refs(gitUrl, { allowLocal: allowLocalGit }).pipe(Effect.mapError((e) => new ValidationFailed({ detail: e.message })))

    const found = (template: string, actor: Template.Actor) => (view: Option.Option<TemplatesTable.TemplateView>) =>
      Option.isSome(view) && visibleTo(view.value, actor) ? Effect.succeed(view.value) : Effect.fail(new Template.TemplateNotFound({ template }))

    const getBySlug = (principal: Principal, slug: string) => table.bySlug(slug).pipe(Effect.flatMap(found(slug, actorOf(principal))))
    const getById = (principal: Principal, templateId: string) => table.byId(templateId).pipe(Effect.flatMap(found(templateId, actorOf(principal))))

    /** Where a new version of a template comes from: the CID given, or its repository again (at `ref` or `branch` if given). */
    const sourceForUpdate = (template: Template.Template, input: UpdateInput): Effect.Effect<Source, ValidationFailed> => {
      if (input.templateCid !== undefined) return Effect.succeed({ _tag: "Cid", templateCid: input.templateCid })
      if (template.gitUrl === undefined) {
        return Effect.fail(new ValidationFailed({ detail: "this template was not published from git; give templateCid to publish a new version" }))
      }
      const ref = input.ref ?? (input.branch === undefined ? template.gitRef : `refs/heads/${input.branch}`)
      return Effect.succeed({
        _tag: "Git",
        git: {
          gitUrl: template.gitUrl,
          ...(ref === undefined ? {} : { ref }),
          ...((input.path ?? template.gitPath) === undefined ? {} : { path: input.path ?? template.gitPath })
        }
      })
    }

    const update = (actor: Template.Actor, userId: string, templateId: string, input: UpdateInput, allowLocal: boolean) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Template.decider, Template.stream(templateId))
        const template = yield* Effect.fromResult(Template.visible(loaded.state, templateId, actor))
        if (!Template.canChange(template, actor)) return yield* new Template.TemplateNotOwned({ templateId })
        const name = yield* Effect.fromResult(optionalName(input.name))
        const source = yield* sourceForUpdate(template, input)
        const { prepared } = yield* prepare(source, allowLocal, name ?? template.name)
        return yield* publishVersion(templateId, actor, userId, prepared, input.featured)
      })

    /** PUT: a new version from the template's repository (pulled again) or from `templateCid`. */
    const republish = Effect.fn("Templates.republish")(function*(principal: Principal, templateId: string, input: UpdateInput = {}) {
      const { featured: _, ...rest } = input
      return (yield* update(actorOf(principal), principal.userId, templateId, rest, allowLocalGit)).template
    })

    const archiveAs = (actor: Template.Actor, userId: string, templateId: string) =>
      Effect.gen(function*() {
        const command = new Template.ArchiveTemplate({ templateId, actor, userId, at: yield* now })
        yield* commands.execute(Template.decider, Template.stream(templateId), command, { actor: userId })
      })

    /** Archives a template of the caller's workspace: no longer listed or found; its slug stays taken. */
    const archive = Effect.fn("Templates.archive")(function*(principal: Principal, templateId: string) {
      yield* archiveAs(actorOf(principal), principal.userId, templateId)
    })

    /**
     * A template the caller may use, ready for an agent: its current version's manifest and files, read from its
     * snapshot. Missing, archived or another workspace's: 404 `Template not found`.
     */
    const materialize = Effect.fn("Templates.materialize")(function*(principal: Principal, templateId: string) {
      const template = yield* getById(principal, templateId)
      // A published snapshot was checked when it was stored: one that no longer reads is the store's fault, not the caller's.
      const files = yield* readStored(template.snapshotCid).pipe(
        Effect.catchTag("InvalidTemplate", (e) => Effect.die(new Error(`template ${templateId}: snapshot ${template.snapshotCid} unreadable: ${e.errors.join("; ")}`)))
      )
      const manifestFile = files.find((f) => f.path === manifestPath)
      const manifest = manifestFile === undefined ? undefined : (JSON.parse(text.decode(manifestFile.content)) as Manifest)
      if (manifest === undefined) return yield* Effect.die(new Error(`template ${templateId}: snapshot ${template.snapshotCid} has no manifest.json`))
      const others = files.filter((f) => f.path !== manifestPath && (f.kind ?? "file") === "file").map(({ path, content }) => ({ path, content }))
      const pinataLayout = others.some((f) => f.path.startsWith("workspace/"))
      return {
        template,
        manifest,
        files: pinataLayout
          ? others.filter((f) => f.path.startsWith("workspace/")).map((f) => ({ path: f.path.slice("workspace/".length), content: f.content }))
          : others,
        rootFiles: pinataLayout ? others.filter((f) => !f.path.startsWith("workspace/")) : []
      } satisfies Materialized
    })

    /**
     * The manifest of a stored template folder, as an agent recorded it (`AgentCreated.template.snapshotCid`): the
     * folder is content-addressed, so this is the manifest the agent was made from, whatever versions came since.
     */
    const manifestAt = (snapshotCid: string) =>
      Effect.gen(function*() {
        const entries = yield* content.walk(snapshotCid, "public").pipe(
          Effect.catchTags({ ContentNotFound: () => Effect.fail(notAFolder(snapshotCid)), NotADirectory: () => Effect.fail(notAFolder(snapshotCid)) })
        )
        const entry = entries.find((e) => e.path === manifestPath && e.kind === "file")
        if (entry === undefined) return yield* new Template.InvalidTemplate({ errors: [`${snapshotCid} has no ${manifestPath}`] })
        const bytes = yield* bytesOf(entry.cid).pipe(Effect.catchTag("ContentNotFound", () => Effect.fail(notAFolder(snapshotCid))))
        return JSON.parse(text.decode(bytes)) as Manifest
      })

    // ---- operators and Cairn -------------------------------------------------------------------------------

    /**
     * The admin API's publish: a public template. When the slug is already an admin or shipped template's, the
     * folder becomes its next version (so publishing the same folder again is harmless); a workspace's slug is 409.
     */
    const publishAsAdmin = Effect.fn("Templates.publishAsAdmin")(function*(source: Source, options: PublishOptions & { readonly featured?: boolean | undefined } = {}) {
      const name = yield* Effect.fromResult(optionalName(options.name))
      const { prepared, slugHint } = yield* prepare(source, true, name)
      const slug = yield* slugFor(options.slug, slugHint, prepared.fields.name)
      const holder = yield* holderOf(slug)
      if (Option.isSome(holder)) {
        const held = holder.value.state
        if (held._tag !== "Published" || held.template.publisher === "workspace") return yield* new Template.DuplicateTemplateSlug({ slug })
        const { template, changed } = yield* publishVersion(holder.value.templateId, admin, "admin", prepared, options.featured)
        return { template, created: false, changed }
      }
      const template = yield* publishNew({
        prepared,
        slug,
        visibility: "public",
        featured: options.featured ?? false,
        publisher: "admin",
        workspaceId: null,
        userId: "admin"
      })
      return { template, created: true, changed: true }
    })

    const archiveAsAdmin = (templateId: string) => archiveAs(admin, "admin", templateId)

    /**
     * Publishes Cairn's shipped templates, public and featured, each under its folder's name: a new one is
     * published, a changed one gets a new version, an unchanged one records nothing (so every start may call it).
     * A slug someone else holds, or a shipped template an operator archived, is left alone.
     */
    const publishShipped = Effect.fn("Templates.publishShipped")(function*(catalog: ReadonlyArray<{ readonly slug: string; readonly files: ReadonlyArray<TemplateFile> }>) {
      const outcomes: Array<ShippedOutcome> = []
      for (const { slug, files } of catalog) {
        const prepared = yield* prepare({ _tag: "Files", files }, false, undefined).pipe(
          Effect.map((p) => Option.some(p.prepared)),
          Effect.catchTag("InvalidTemplate", (e) => Effect.as(Effect.logError(`Shipped template ${slug} is invalid, not published: ${e.errors.join("; ")}`), Option.none()))
        )
        if (Option.isNone(prepared)) {
          outcomes.push({ slug, outcome: "invalid" })
          continue
        }
        // Two nodes starting at once race for the slug: the loser finds the winner's template and compares.
        for (let attempt = 1;; attempt++) {
          const holder = yield* holderOf(slug)
          if (Option.isNone(holder)) {
            const published = yield* publishNew({
              prepared: prepared.value,
              slug,
              visibility: "public",
              featured: true,
              publisher: "cairn",
              workspaceId: null,
              userId: "cairn"
            }).pipe(Effect.map(Option.some), Effect.catchTag("DuplicateTemplateSlug", (e) => attempt < 3 ? Effect.succeed(Option.none()) : Effect.fail(e)))
            if (Option.isNone(published)) continue
            outcomes.push({ slug, outcome: "published", templateId: published.value.templateId })
            break
          }
          const { templateId, state } = holder.value
          if (state._tag === "Archived" && state.template.publisher === "cairn") outcomes.push({ slug, outcome: "archived", templateId })
          else if (state._tag !== "Published" || state.template.publisher !== "cairn") outcomes.push({ slug, outcome: "taken", templateId })
          else {
            const { changed } = yield* publishVersion(templateId, cairn, "cairn", prepared.value)
            outcomes.push({ slug, outcome: changed ? "updated" : "unchanged", templateId })
          }
          break
        }
      }
      return outcomes as ReadonlyArray<ShippedOutcome>
    })

    return {
      publish,
      publishFromGit,
      publishFromCid,
      validate,
      list,
      listPublic,
      repositoryRefs,
      getBySlug,
      getById,
      republish,
      archive,
      materialize,
      manifestAt,
      publishAsAdmin,
      archiveAsAdmin,
      publishShipped
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

/** What a new version may change: where the folder comes from, and the name. */
export interface UpdateInput {
  readonly templateCid?: string | undefined
  readonly branch?: string | undefined
  readonly ref?: string | undefined
  readonly path?: string | undefined
  readonly name?: string | undefined
  readonly featured?: boolean | undefined
}
