import { Template } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-22T10:00:00.000Z"
const later = "2026-11-23T10:00:00.000Z"
const templateId = "t1"
const mine = { _tag: "Workspace", workspaceId: "w" } as const
const theirs = { _tag: "Workspace", workspaceId: "other" } as const
const admin = { _tag: "Admin" } as const
const cairn = { _tag: "Cairn" } as const

const version = (snapshotCid: string, name = "Helper") => ({
  name,
  description: "Helps",
  category: "general",
  tags: ["a"],
  snapshotCid,
  manifest: { version: 1, agent: { name } },
  requiredSecrets: [{ name: "API_KEY", description: null, guideUrl: null, required: true }],
  includedSkills: [{ name: "s", cid: "bafyskill" }],
  openclawVersion: null
})

const publish = (overrides: Partial<Omit<Template.PublishTemplate, "_tag">> = {}) =>
  new Template.PublishTemplate({
    templateId,
    slug: "helper",
    ...version("bafy1"),
    visibility: "workspace",
    featured: false,
    publisher: "workspace",
    workspaceId: "w",
    userId: "ada",
    at,
    ...overrides
  })
const published = (overrides: Partial<Omit<Template.TemplatePublished, "_tag">> = {}) => {
  const { _tag, ...fields } = publish(overrides)
  return new Template.TemplatePublished(fields)
}
const shipped = published({ visibility: "public", featured: true, publisher: "cairn", workspaceId: null, userId: "cairn" })
const update = (actor: Template.Actor, snapshotCid: string, extra: Partial<Template.UpdateTemplate> = {}) =>
  new Template.UpdateTemplate({ templateId, actor, ...version(snapshotCid), userId: "ada", at: later, ...extra })
const archive = (actor: Template.Actor) => new Template.ArchiveTemplate({ templateId, actor, userId: "ada", at: later })

describe("a template", () => {
  it("is published once, at version 1", () => {
    given(Template.decider).when(publish()).then([published()])
    given(Template.decider, [published()]).when(publish()).thenFails(new Template.TemplateAlreadyExists({ templateId }))
    const state = given(Template.decider).when(publish()).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Published" && state.success.template.version === 1)
  })

  it("gets a new version when its folder, name or featured flag changes, and none for the same folder", () => {
    given(Template.decider, [published()]).when(update(mine, "bafy2", { gitCommitSha: "abc" })).then([
      new Template.TemplateUpdated({ templateId, version: 2, ...version("bafy2"), gitCommitSha: "abc", featured: false, userId: "ada", at: later })
    ])
    given(Template.decider, [published()]).when(update(mine, "bafy1")).then([])
    given(Template.decider, [published()]).when(update(mine, "bafy1", { name: "Renamed" })).then([
      new Template.TemplateUpdated({ templateId, version: 2, ...version("bafy1"), name: "Renamed", featured: false, userId: "ada", at: later })
    ])
    given(Template.decider, [shipped]).when(update(admin, "bafy1", { featured: false })).then([
      new Template.TemplateUpdated({ templateId, version: 2, ...version("bafy1"), featured: false, userId: "ada", at: later })
    ])
    const v2 = new Template.TemplateUpdated({ templateId, version: 2, ...version("bafy2"), featured: false, userId: "ada", at: later })
    const state = given(Template.decider, [published(), v2]).when(update(mine, "bafy3")).state()
    assert.isTrue(Result.isSuccess(state) && state.success._tag === "Published" && state.success.template.version === 3 && state.success.template.snapshotCid === "bafy3")
  })

  it("is changed only by its publisher's workspace or an operator; Cairn changes only what it shipped", () => {
    given(Template.decider, [published()]).when(update(theirs, "bafy2")).thenFails(new Template.TemplateNotFound({ template: templateId }))
    given(Template.decider, [published()]).when(update(cairn, "bafy2")).thenFails(new Template.TemplateNotFound({ template: templateId }))
    given(Template.decider, [published()]).when(archive(admin)).then([new Template.TemplateArchived({ templateId, slug: "helper", userId: "ada", at: later })])
    // A public template is seen by everyone, but only its publisher may change it: 403, not 404.
    given(Template.decider, [shipped]).when(update(mine, "bafy2")).thenFails(new Template.TemplateNotOwned({ templateId }))
    given(Template.decider, [shipped]).when(archive(mine)).thenFails(new Template.TemplateNotOwned({ templateId }))
    given(Template.decider, [shipped]).when(update(cairn, "bafy2")).decision.pipe((d) => assert.isTrue(Result.isSuccess(d)))
    const adminPublished = published({ visibility: "public", publisher: "admin", workspaceId: null, userId: "admin" })
    given(Template.decider, [adminPublished]).when(update(cairn, "bafy2")).thenFails(new Template.TemplateNotOwned({ templateId }))
  })

  it("is archived once, and then is not found, nor changed", () => {
    const archived = new Template.TemplateArchived({ templateId, slug: "helper", userId: "ada", at: later })
    given(Template.decider, [published()]).when(archive(mine)).then([archived])
    given(Template.decider, [published(), archived]).when(archive(mine)).thenFails(new Template.TemplateNotFound({ template: templateId }))
    given(Template.decider, [published(), archived]).when(update(admin, "bafy2")).thenFails(new Template.TemplateNotFound({ template: templateId }))
    given(Template.decider).when(archive(admin)).thenFails(new Template.TemplateNotFound({ template: templateId }))
  })

  it("is seen by its workspace, by everyone when public, and by operators", () => {
    const state = (history: ReadonlyArray<Template.TemplateEvent>) => history.reduce(Template.evolve, Template.initial)
    assert.isTrue(Result.isSuccess(Template.visible(state([published()]), templateId, mine)))
    assert.isTrue(Result.isFailure(Template.visible(state([published()]), templateId, theirs)))
    assert.isTrue(Result.isSuccess(Template.visible(state([published()]), templateId, admin)))
    assert.isTrue(Result.isSuccess(Template.visible(state([shipped]), templateId, theirs)))
  })
})

describe("a slug", () => {
  it("is made from the name: lowercase words joined by hyphens, accents dropped", () => {
    assert.strictEqual(Template.slugify("Research Assistant"), "research-assistant")
    assert.strictEqual(Template.slugify("  Café -- Crème!! (v2) "), "cafe-creme-v2")
    assert.strictEqual(Template.slugify("🤖"), "template")
    assert.strictEqual(Template.slugify("ID"), "id-template")
    const long = Template.slugify("word ".repeat(40))
    assert.isAtMost(long.length, 100)
    assert.isTrue(Result.isSuccess(Template.validateSlug(long)))
    assert.strictEqual(Template.slugify("x".repeat(150)).length, 100)
  })

  it("must be lowercase words joined by single hyphens, at most 100 characters, and not a route's word", () => {
    for (const good of ["a", "research-assistant", "v2-bot", "x".repeat(100)]) assert.isTrue(Result.isSuccess(Template.validateSlug(good)), good)
    for (const bad of [undefined, "", "Caps", "a--b", "-a", "a-", "a_b", "a b", "x".repeat(101), "validate", "id"]) {
      const error = Result.getFailure(Template.validateSlug(bad))
      assert.isTrue(error._tag === "Some" && error.value.message.startsWith("Validation failed: slug"), String(bad))
    }
  })
})

describe("an invalid template", () => {
  it("answers 400 with its first reason, and carries all of them", () => {
    const error = new Template.InvalidTemplate({ errors: ["/agent/name: is required", "/version: must be 1"] })
    assert.strictEqual(error.status, 400)
    assert.strictEqual(error.message, "Validation failed: /agent/name: is required")
    assert.deepStrictEqual(error.details, { validationErrors: ["/agent/name: is required", "/version: must be 1"] })
  })
})
