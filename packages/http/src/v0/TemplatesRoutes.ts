/**
 * `/v0/templates`: the template catalog. List (public templates and the caller's workspace's, with `featured`,
 * `category` and `submittedBy=me` filters, and the categories), publish from git or from a stored folder (201),
 * validate without publishing (200 even when invalid), look up by slug or id, publish a new version (PUT pulls the
 * repository again), archive (DELETE). An invalid folder is 400 `Validation failed: <first error>` with every error
 * in `validationErrors`. The manifest v1 JSON Schema is served unauthenticated, for editors.
 */
import { type TemplateView, Templates } from "@cairn/application"
import { Template, ValidationFailed } from "@cairn/domain"
import { ManifestSchema } from "@cairn/templates"
import { Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest } from "effect/http"
import { handled } from "../ErrorResponse.ts"
import { json } from "../Respond.ts"
import * as RouteCatalog from "../RouteCatalog.ts"
import * as Kit from "./Kit.ts"

/** The wire shape of a template (Pinata's Template object, without the marketplace's payment fields). */
export const TemplateWire = Schema.Struct({
  templateId: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  version: Schema.Int,
  description: Schema.String,
  category: Schema.String,
  tags: Schema.Array(Schema.String),
  snapshotCid: Schema.String,
  openclawVersion: Schema.NullOr(Schema.String),
  requiredSecrets: Schema.Array(Template.RequiredSecret),
  includedSkills: Schema.Array(Template.IncludedSkill),
  includedSkillCids: Schema.Array(Schema.String),
  featured: Schema.Boolean,
  status: Schema.Literals(["published", "archived"]),
  visibility: Template.Visibility,
  gitUrl: Schema.NullOr(Schema.String),
  gitCommitSha: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  userId: Schema.String,
  /** The wallet whose EIP-712 signature the folder's CID carries (`/v3` signatures), if any. */
  signedBy: Schema.NullOr(Schema.String)
})

export const toWire = (template: TemplateView): typeof TemplateWire.Type => ({
  templateId: template.templateId,
  name: template.name,
  slug: template.slug,
  version: template.version,
  description: template.description,
  category: template.category,
  tags: template.tags,
  snapshotCid: template.snapshotCid,
  openclawVersion: template.openclawVersion,
  requiredSecrets: template.requiredSecrets.map((s) => ({ name: s.name, description: s.description, guideUrl: s.guideUrl, required: s.required })),
  includedSkills: template.includedSkills.map((skill) => ({
    name: skill.name,
    ...(skill.cid === undefined ? {} : { cid: skill.cid }),
    ...(skill.clawhubSlug === undefined ? {} : { clawhubSlug: skill.clawhubSlug })
  })),
  includedSkillCids: template.includedSkillCids,
  featured: template.featured,
  status: template.status,
  visibility: template.visibility,
  gitUrl: template.gitUrl,
  gitCommitSha: template.gitCommitSha,
  createdAt: template.createdAt,
  updatedAt: template.updatedAt,
  userId: template.userId,
  signedBy: template.signedBy
})

const TemplateAnswer = Schema.Struct({ template: TemplateWire })
const TemplateDone = Schema.Struct({ success: Schema.Boolean, template: TemplateWire })
/** A validation's verdict, never a failure for an invalid folder: its errors, manifest, files, README and commit. */
const ValidationReportWire = Schema.Struct({
  valid: Schema.Boolean,
  errors: Schema.Array(Schema.String),
  manifest: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  readme: Schema.NullOr(Schema.String),
  files: Schema.Array(Schema.String),
  commitSha: Schema.NullOr(Schema.String)
})

const Text = (max: number) => Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(max)))

/** Where a folder comes from: a repository (`ref` or `branch`, and a `path` inside it) or a stored folder's CID. */
const SourceFields = {
  gitUrl: Schema.optional(Text(2000)),
  branch: Schema.optional(Text(255)),
  ref: Schema.optional(Text(255)),
  path: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(1000)))),
  templateCid: Schema.optional(Text(200))
}
// name and slug are strings; their rules (length, slug shape) are the domain's, so refusals read the same everywhere.
const Publish = Schema.Struct({ ...SourceFields, name: Schema.optional(Schema.String), slug: Schema.optional(Schema.String) })
const Validate = Schema.Struct({ ...SourceFields, manifest: Schema.optional(Schema.Unknown) })
const Republish = Schema.Struct({ ...SourceFields, name: Schema.optional(Schema.String) })

type SourceInput = typeof Validate.Type

const TemplatesQuery = Schema.Struct({
  featured: Schema.optionalKey(Schema.Literals(["true", "false"])),
  category: Schema.optionalKey(Schema.String),
  submittedBy: Schema.optionalKey(Schema.Literal("me"))
})

/** The one source a body names: exactly one of `gitUrl` and `templateCid`. */
const sourceOf = (input: SourceInput) =>
  input.gitUrl !== undefined && input.templateCid !== undefined
    ? Effect.fail(new ValidationFailed({ detail: "give gitUrl or templateCid, not both" }))
    : input.gitUrl !== undefined
    ? Effect.succeed({
      _tag: "Git" as const,
      git: { gitUrl: input.gitUrl, branch: input.branch, ref: input.ref, path: input.path }
    })
    : input.templateCid !== undefined
    ? Effect.succeed({ _tag: "Cid" as const, templateCid: input.templateCid })
    : Effect.fail(new ValidationFailed({ detail: "gitUrl or templateCid is required" }))

/** A body that may be absent (PUT with nothing to say): empty is `{}`. */
const optionalBody = <S extends Schema.Codec<unknown, unknown>>(request: HttpServerRequest.HttpServerRequest, schema: S) =>
  Effect.gen(function*() {
    const text = (yield* request.text).trim()
    let value: unknown = {}
    if (text !== "") {
      try {
        value = JSON.parse(text)
      } catch {
        return yield* new ValidationFailed({ detail: "the request body is not valid JSON" })
      }
    }
    return yield* Schema.decodeUnknownEffect(schema)(value)
  })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route } = yield* Kit.make(router)
    const templates = yield* Templates

    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/v0/templates/schema/manifest.v1.json",
      summary: "The template manifest v1 JSON Schema (open, for editors)",
      auth: "none",
      response: { schema: Schema.Record(Schema.String, Schema.Unknown), description: "A JSON Schema (draft 2020-12) document" }
    }, () => handled(Effect.succeed(json(ManifestSchema.schema))))

    yield* route("GET", "/v0/templates", { summary: "List templates: public ones and the workspace's", query: TemplatesQuery, response: { schema: Schema.Struct({ templates: Schema.Array(TemplateWire), categories: Schema.Array(Schema.String) }) } }, ({ principal, request }) =>
      Effect.gen(function*() {
        const query = new URL(request.url, "http://cairn").searchParams
        const featured = query.get("featured")
        const submittedBy = query.get("submittedBy")
        if (submittedBy !== null && submittedBy !== "me") return yield* new ValidationFailed({ detail: "submittedBy can only be me" })
        const { templates: list, categories } = yield* templates.list(principal, {
          featured: featured === null ? undefined : featured !== "false",
          category: query.get("category") ?? undefined,
          submittedBy: submittedBy === "me" ? "me" : undefined
        })
        return { templates: list.map(toWire), categories }
      }))

    yield* route("POST", "/v0/templates", { summary: "Publish a template from a repository or a stored folder", body: { schema: Publish }, response: { status: 201, schema: TemplateDone }, errors: [new Template.InvalidTemplate({ errors: [] }), new Template.DuplicateTemplateSlug({ slug: "" })] }, ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(Publish)
        const source = yield* sourceOf(input)
        const template = yield* templates.publish(principal, source, { name: input.name, slug: input.slug })
        return Kit.created({ success: true, template: toWire(template) })
      }))

    yield* route("POST", "/v0/templates/validate", { summary: "Validate a template folder without publishing it", body: { schema: Validate }, response: { schema: ValidationReportWire } }, ({ principal, body }) =>
      Effect.gen(function*() {
        const input = yield* body(Validate)
        const source = input.gitUrl === undefined && input.templateCid === undefined && input.manifest !== undefined
          ? { _tag: "Manifest" as const, manifest: input.manifest }
          : yield* sourceOf(input)
        const report = yield* templates.validate(principal, source)
        return {
          valid: report.valid,
          errors: report.errors,
          manifest: report.manifest as Readonly<Record<string, unknown>> | null,
          readme: report.readme,
          files: report.files,
          commitSha: report.commitSha
        } satisfies typeof ValidationReportWire.Type
      }))

    const RefsBody = Schema.Struct({ gitUrl: Schema.String.check(Schema.isNonEmpty()) })
    yield* route("POST", "/v0/templates/branches", { summary: "The branches of a repository a template could be published from", body: { schema: RefsBody }, response: { schema: Schema.Struct({ branches: Schema.Array(Schema.String) }) } }, ({ body }) =>
      Effect.gen(function*() {
        const { branches } = yield* templates.repositoryRefs((yield* body(RefsBody)).gitUrl)
        return { branches }
      }))
    yield* route("POST", "/v0/templates/refs", { summary: "The branches and tags of a repository a template could be published from", body: { schema: RefsBody }, response: { schema: Schema.Struct({ branches: Schema.Array(Schema.String), tags: Schema.Array(Schema.String) }) } }, ({ body }) =>
      Effect.gen(function*() {
        const { branches, tags } = yield* templates.repositoryRefs((yield* body(RefsBody)).gitUrl)
        return { branches, tags }
      }))

    yield* RouteCatalog.add(router, {
      method: "GET",
      path: "/v0/public-templates",
      summary: "The public template marketplace: templates published for every workspace (no credentials)",
      auth: "none",
      query: Schema.Struct({ featured: Schema.optionalKey(Schema.Literals(["true", "false"])), category: Schema.optionalKey(Schema.String) }),
      response: { schema: Schema.Struct({ templates: Schema.Array(TemplateWire), categories: Schema.Array(Schema.String) }) }
    }, (request) =>
      handled(Effect.gen(function*() {
        const query = new URL(request.url, "http://cairn").searchParams
        const featured = query.get("featured")
        if (featured !== null && featured !== "true" && featured !== "false") return yield* new ValidationFailed({ detail: "featured must be true or false" })
        const { templates: list, categories } = yield* templates.listPublic({
          featured: featured === null ? undefined : featured === "true",
          category: query.get("category") ?? undefined
        })
        return json({ templates: list.map(toWire), categories })
      })))

    yield* route("GET", "/v0/templates/id/:templateId", { summary: "Get a template by id", response: { schema: TemplateAnswer }, errors: [new Template.TemplateNotFound({ template: "" })] }, ({ principal, params }) =>
      Effect.map(templates.getById(principal, params["templateId"] ?? ""), (template) => ({ template: toWire(template) })))

    yield* route("GET", "/v0/templates/:slug", { summary: "Get a template by slug", response: { schema: TemplateAnswer }, errors: [new Template.TemplateNotFound({ template: "" })] }, ({ principal, params }) =>
      Effect.map(templates.getBySlug(principal, params["slug"] ?? ""), (template) => ({ template: toWire(template) })))

    yield* route("PUT", "/v0/templates/:templateId", { summary: "Publish a template's next version", body: { schema: Republish, optional: true }, response: { schema: TemplateDone }, errors: [new Template.TemplateNotFound({ template: "" }), new Template.TemplateNotOwned({ templateId: "" }), new Template.InvalidTemplate({ errors: [] })] }, ({ principal, params, request }) =>
      Effect.gen(function*() {
        const input = yield* optionalBody(request, Republish)
        if (input.gitUrl !== undefined) return yield* new ValidationFailed({ detail: "a template's repository cannot change; publish a new template instead" })
        const template = yield* templates.republish(principal, params["templateId"] ?? "", {
          templateCid: input.templateCid,
          branch: input.branch,
          ref: input.ref,
          path: input.path,
          name: input.name
        })
        return { success: true, template: toWire(template) }
      }))

    yield* route("DELETE", "/v0/templates/:templateId", { summary: "Archive a template", response: { schema: Kit.Done }, errors: [new Template.TemplateNotFound({ template: "" }), new Template.TemplateNotOwned({ templateId: "" })] }, ({ principal, params }) =>
      Effect.as(templates.archive(principal, params["templateId"] ?? ""), { success: true, message: "Template archived" }))
  })
)
