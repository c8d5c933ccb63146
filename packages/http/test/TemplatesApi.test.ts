/**
 * The template catalog through the real routes: publishing from real git repositories (made with the git CLI) and
 * from stored folders, validation, lookups and their visibility, new versions, archiving, the shipped catalog, the
 * admin API, and what an agent's creation gets (`materialize`). Runs on PGlite, and on a fresh Postgres database
 * when DATABASE_URL is set.
 */
import { type Principal, Templates } from "@cairn/application"
import { ContentStore } from "@cairn/content-store"
import { Catalog } from "@cairn/templates/node"
import { makeRepository, type Repository } from "@cairn/templates/testing"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pathToFileURL } from "node:url"

// Workspaces may read repositories on this machine here (TEMPLATES_ALLOW_LOCAL_GIT=true); the default is below.
const api = TestRuntime.makeTestApi({ allowLocalGit: true })
const { request, workspace, key, runtime } = api
afterAll(api.dispose)

const { expectError } = ApiKit
/** What a refused template folder without a manifest lists as its problems. */
const missingManifest = { validationErrors: ["manifest.json: missing (it must be at the template's root)"] }

const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: 1,
    agent: { name, description: `${name} helps`, vibe: "calm", emoji: "🧭" },
    category: "research",
    tags: ["test"],
    secrets: [{ name: "SEARCH_API_KEY", description: "For search", guideUrl: "https://example.com/keys" }, { name: "OPTIONAL_KEY", required: false }],
    skills: [{ name: "notes", cid: "bafybeicglyjdb6wrrcbfyu6i2fe4lpxdxgvfvlht7yzdim7cvwt656whue" }, { name: "hub", clawhub_slug: "@owner/hub" }],
    ...extra
  }, null, 2)

const templateFolder = (name: string, soul = "Be helpful.") => ({
  "templates/helper/manifest.json": manifest(name),
  "templates/helper/SOUL.md": soul,
  "templates/helper/IDENTITY.md": `# ${name}`,
  "README.md": "not part of the template"
})

const principalOf = (workspaceId: string): Principal => ({ workspaceId, userId: "ada", keyId: "k", scopes: ["org:agents"] })
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

let owner: string
let ownerWorkspace: string
let stranger: string
let repo: Repository
let gitUrl: string
let firstCommit: string

beforeAll(async () => {
  ownerWorkspace = await workspace(5)
  owner = (await key(ownerWorkspace)).token
  stranger = (await key(await workspace(5), ["org:agents"], "eve")).token
  repo = makeRepository()
  firstCommit = repo.commit(templateFolder("Field Researcher"))
  gitUrl = pathToFileURL(repo.dir).toString()
}, 120_000)

const publishFromGit = (token: string, body: Record<string, unknown> = {}) =>
  request("POST", "/v0/templates", token, { gitUrl, path: "templates/helper", ...body })

describe("publishing a template from git", () => {
  let template: Record<string, any>

  it("answers 201 with the template: its listing read off the manifest, its folder stored, its commit", async () => {
    const created = await publishFromGit(owner)
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body!["success"], true)
    template = created.body!["template"]
    assert.deepStrictEqual(Object.keys(template).sort(), [
      "category", "createdAt", "description", "featured", "gitCommitSha", "gitUrl", "includedSkillCids", "includedSkills", "name",
      "openclawVersion", "requiredSecrets", "signedBy", "slug", "snapshotCid", "status", "tags", "templateId", "updatedAt", "userId", "version", "visibility"
    ])
    assert.include(template, {
      name: "Field Researcher",
      slug: "field-researcher",
      description: "Field Researcher helps",
      category: "research",
      featured: false,
      status: "published",
      visibility: "workspace",
      gitUrl,
      gitCommitSha: firstCommit,
      openclawVersion: null,
      userId: "ada",
      version: 1
    })
    assert.match(template["snapshotCid"], /^bafy/)
    assert.deepStrictEqual(template["tags"], ["test"])
    assert.deepStrictEqual(template["requiredSecrets"], [
      { name: "SEARCH_API_KEY", description: "For search", guideUrl: "https://example.com/keys", required: true },
      { name: "OPTIONAL_KEY", description: null, guideUrl: null, required: false }
    ])
    assert.deepStrictEqual(template["includedSkills"], [
      { name: "notes", cid: "bafybeicglyjdb6wrrcbfyu6i2fe4lpxdxgvfvlht7yzdim7cvwt656whue" },
      { name: "hub", clawhubSlug: "@owner/hub" }
    ])
    assert.deepStrictEqual(template["includedSkillCids"], ["bafybeicglyjdb6wrrcbfyu6i2fe4lpxdxgvfvlht7yzdim7cvwt656whue"])
  })

  it("is found by its workspace by slug and by id, and by no other workspace", async () => {
    const bySlug = await request("GET", "/v0/templates/field-researcher", owner)
    assert.strictEqual(bySlug.status, 200)
    assert.deepStrictEqual(bySlug.body, { template })
    assert.deepStrictEqual((await request("GET", `/v0/templates/id/${template["templateId"]}`, owner)).body, { template })
    expectError(await request("GET", "/v0/templates/field-researcher", stranger), 404, "Template not found")
    expectError(await request("GET", `/v0/templates/id/${template["templateId"]}`, stranger), 404, "Template not found")
    expectError(await request("GET", "/v0/templates/no-such-template", owner), 404, "Template not found")
    const listed = (await request("GET", "/v0/templates", stranger)).body!["templates"] as Array<{ slug: string }>
    assert.notInclude(listed.map((t) => t.slug), "field-researcher")
  })

  it("takes a name and a slug, and refuses a slug already taken: 409 Duplicate template slug", async () => {
    const named = await publishFromGit(owner, { name: "Renamed Researcher", slug: "renamed" })
    assert.strictEqual(named.status, 201)
    assert.include(named.body!["template"], { name: "Renamed Researcher", slug: "renamed" })
    expectError(await publishFromGit(owner), 409, "Duplicate template slug")
    // Slugs are unique across the catalog, not per workspace.
    expectError(await publishFromGit(stranger, { slug: "renamed" }), 409, "Duplicate template slug")
  })

  it("gives exactly one of 10 parallel publishes of one slug a 201, and the rest 409", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => publishFromGit(owner, { slug: "raced" })))
    assert.strictEqual(results.filter((r) => r.status === 201).length, 1, JSON.stringify(results.map((r) => r.body)))
    assert.strictEqual(results.filter((r) => r.status === 409 && r.body?.["error"] === "Duplicate template slug").length, 9)
  })

  it("publishes from a branch, a tag or a commit", async () => {
    repo.git("tag", "v1")
    repo.git("checkout", "-q", "-b", "beta")
    const betaCommit = repo.commit({ "templates/helper/SOUL.md": "Beta soul." })
    repo.git("checkout", "-q", "main")
    const fromBranch = await publishFromGit(owner, { branch: "beta", slug: "from-branch" })
    assert.strictEqual(fromBranch.body!["template"].gitCommitSha, betaCommit)
    const fromTag = await publishFromGit(owner, { ref: "refs/tags/v1", slug: "from-tag" })
    assert.strictEqual(fromTag.body!["template"].gitCommitSha, firstCommit)
    const fromCommit = await publishFromGit(owner, { ref: betaCommit, slug: "from-commit" })
    assert.strictEqual(fromCommit.body!["template"].snapshotCid, fromBranch.body!["template"].snapshotCid)
  })

  it("refuses an invalid folder: 400 Validation failed with the first error, and every error in validationErrors", async () => {
    const bad = makeRepository()
    bad.commit({ "manifest.json": JSON.stringify({ version: 1, agent: { name: "x".repeat(101) }, skills: [{ name: "s" }] }) })
    const refused = await request("POST", "/v0/templates", owner, { gitUrl: bad.dir })
    expectError(refused, 400, "Validation failed: /agent/name: must NOT have more than 100 characters", {
      validationErrors: ["/agent/name: must NOT have more than 100 characters", "/skills/0: must have exactly one of clawhub_slug or cid"]
    })
    assert.deepStrictEqual(refused.body!["validationErrors"], [
      "/agent/name: must NOT have more than 100 characters",
      "/skills/0: must have exactly one of clawhub_slug or cid"
    ])
    const noManifest = makeRepository()
    noManifest.commit({ "SOUL.md": "x" })
    expectError(await request("POST", "/v0/templates", owner, { gitUrl: noManifest.dir }), 400, "Validation failed: manifest.json: missing (it must be at the template's root)", missingManifest)
    expectError(await publishFromGit(owner, { branch: "no-such-branch" }), 400, /^Validation failed: could not read .*: no branch, tag or commit named no-such-branch$/, {
      validationErrors: [`could not read ${gitUrl}: no branch, tag or commit named no-such-branch`]
    })
    expectError(await publishFromGit(owner, { path: "nowhere" }), 400, /no folder nowhere in that commit$/, { validationErrors: [`could not read ${gitUrl}: no folder nowhere in that commit`] })
  })

  it("needs exactly one of gitUrl and templateCid, and a slug of lowercase words", async () => {
    expectError(await request("POST", "/v0/templates", owner, {}), 400, "Validation failed: gitUrl or templateCid is required")
    expectError(await request("POST", "/v0/templates", owner, { gitUrl, templateCid: "bafy" }), 400, "Validation failed: give gitUrl or templateCid, not both")
    expectError(await publishFromGit(owner, { slug: "Not A Slug" }), 400, /^Validation failed: slug must be lowercase/)
    expectError(await publishFromGit(owner, { name: "" }), 400, "Validation failed: name must be 1 to 100 characters")
    expectError(await request("POST", "/v0/templates", owner, { gitUrl: 42 }), 400, /^Validation failed: /)
    expectError(await request("POST", "/v0/templates", owner, "not json"), 400, /^Validation failed: /)
    expectError(await request("POST", "/v0/templates", undefined, { gitUrl }), 401, "Unauthorized", { reason: "missing-credentials" })
  })
})

describe("publishing a stored folder by CID", () => {
  it("publishes the same folder under another slug, without storing it again", async () => {
    const first = (await request("GET", "/v0/templates/field-researcher", owner)).body!["template"]
    const copy = await request("POST", "/v0/templates", owner, { templateCid: first.snapshotCid, slug: "field-researcher-copy" })
    assert.strictEqual(copy.status, 201, JSON.stringify(copy.body))
    assert.include(copy.body!["template"], { snapshotCid: first.snapshotCid, name: "Field Researcher", gitUrl: null, gitCommitSha: null })
  })

  it("refuses a CID that is no stored folder", async () => {
    const missing = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
    expectError(await request("POST", "/v0/templates", owner, { templateCid: missing }), 400, `Validation failed: templateCid ${missing} is not a folder stored on the public network`, {
      validationErrors: [`templateCid ${missing} is not a folder stored on the public network`]
    })
    const file = await runtime.runPromise(
      ContentStore.use((content) => content.addDirectory([{ path: "a.txt", content: new TextEncoder().encode("a") }], { network: "public" }))
    )
    expectError(await request("POST", "/v0/templates", owner, { templateCid: file.cid }), 400, "Validation failed: manifest.json: missing (it must be at the template's root)", missingManifest)
  })
})

describe("validating a template", () => {
  it("answers 200 with the verdict, the manifest, the files, the README and the commit", async () => {
    const valid = await request("POST", "/v0/templates/validate", owner, { gitUrl, path: "templates/helper" })
    assert.strictEqual(valid.status, 200)
    assert.strictEqual(valid.body!["valid"], true)
    assert.deepStrictEqual(valid.body!["errors"], [])
    assert.strictEqual(valid.body!["manifest"].agent.name, "Field Researcher")
    assert.deepStrictEqual([...valid.body!["files"]].sort(), ["IDENTITY.md", "SOUL.md", "manifest.json"])
    assert.strictEqual(valid.body!["commitSha"], repo.git("rev-parse", "HEAD"))
    assert.strictEqual(valid.body!["readme"], null)
    const root = await request("POST", "/v0/templates/validate", owner, { gitUrl })
    assert.strictEqual(root.body!["readme"], "not part of the template")
    assert.deepStrictEqual(root.body!["errors"], ["manifest.json: missing (it must be at the template's root)"])
  })

  it("answers 200 for an invalid manifest or an unreadable repository too, with the errors", async () => {
    const invalid = await request("POST", "/v0/templates/validate", owner, { manifest: { version: 1, agent: { name: "ok" }, tasks: [{ name: "t", schedule: "0 9 * * *" }] } })
    assert.strictEqual(invalid.status, 200)
    assert.deepStrictEqual(invalid.body, { valid: false, errors: ["/tasks/0/prompt: is required"], manifest: { version: 1, agent: { name: "ok" }, tasks: [{ name: "t", schedule: "0 9 * * *" }] }, readme: null, files: ["manifest.json"], commitSha: null })
    const good = await request("POST", "/v0/templates/validate", owner, { manifest: JSON.parse(manifest("Fine")) })
    assert.strictEqual(good.body!["valid"], true)
    const unreadable = await request("POST", "/v0/templates/validate", owner, { gitUrl: `${gitUrl}-missing` })
    assert.strictEqual(unreadable.status, 200)
    assert.strictEqual(unreadable.body!["valid"], false)
    assert.match(unreadable.body!["errors"][0], /^could not read .*: not a git repository$/)
    const stored = (await request("GET", "/v0/templates/field-researcher", owner)).body!["template"].snapshotCid
    assert.strictEqual((await request("POST", "/v0/templates/validate", owner, { templateCid: stored })).body!["valid"], true)
  })
})

describe("a new version", () => {
  it("is pulled from the template's repository again by PUT; the same folder records nothing", async () => {
    const created = (await publishFromGit(owner, { slug: "versioned" })).body!["template"]
    const unchanged = await request("PUT", `/v0/templates/${created.templateId}`, owner)
    assert.strictEqual(unchanged.status, 200, JSON.stringify(unchanged.body))
    assert.include(unchanged.body!["template"], { version: 1, snapshotCid: created.snapshotCid })
    const next = repo.commit({ "templates/helper/SOUL.md": "A new soul.", "templates/helper/manifest.json": manifest("Field Researcher", { category: "science" }) })
    const updated = await request("PUT", `/v0/templates/${created.templateId}`, owner, {})
    assert.strictEqual(updated.body!["success"], true)
    assert.include(updated.body!["template"], { version: 2, gitCommitSha: next, category: "science", slug: "versioned", templateId: created.templateId })
    assert.notStrictEqual(updated.body!["template"].snapshotCid, created.snapshotCid)
    assert.deepStrictEqual((await request("GET", "/v0/templates/versioned", owner)).body!["template"], updated.body!["template"])
  })

  it("is refused to another workspace (404), and for a template not from git without templateCid (400)", async () => {
    const created = (await publishFromGit(owner, { slug: "guarded" })).body!["template"]
    expectError(await request("PUT", `/v0/templates/${created.templateId}`, stranger), 404, "Template not found")
    const byCid = (await request("POST", "/v0/templates", owner, { templateCid: created.snapshotCid, slug: "by-cid" })).body!["template"]
    expectError(await request("PUT", `/v0/templates/${byCid.templateId}`, owner), 400, /^Validation failed: this template was not published from git/)
    const other = (await request("GET", "/v0/templates/from-branch", owner)).body!["template"]
    const moved = await request("PUT", `/v0/templates/${byCid.templateId}`, owner, { templateCid: other.snapshotCid })
    assert.include(moved.body!["template"], { version: 2, snapshotCid: other.snapshotCid })
    expectError(await request("PUT", `/v0/templates/${created.templateId}`, owner, { gitUrl: "https://example.com/other.git" }), 400, /^Validation failed: a template's repository cannot change/)
  })
})

describe("archiving", () => {
  it("takes the template out of lists and lookups; its slug stays taken", async () => {
    const created = (await publishFromGit(owner, { slug: "short-lived" })).body!["template"]
    expectError(await request("DELETE", `/v0/templates/${created.templateId}`, stranger), 404, "Template not found")
    assert.deepStrictEqual((await request("DELETE", `/v0/templates/${created.templateId}`, owner)).body, { success: true, message: "Template archived" })
    expectError(await request("GET", "/v0/templates/short-lived", owner), 404, "Template not found")
    expectError(await request("GET", `/v0/templates/id/${created.templateId}`, owner), 404, "Template not found")
    expectError(await request("DELETE", `/v0/templates/${created.templateId}`, owner), 404, "Template not found")
    expectError(await request("PUT", `/v0/templates/${created.templateId}`, owner), 404, "Template not found")
    const listed = (await request("GET", "/v0/templates?submittedBy=me", owner)).body!["templates"] as Array<{ slug: string }>
    assert.notInclude(listed.map((t) => t.slug), "short-lived")
    expectError(await publishFromGit(owner, { slug: "short-lived" }), 409, "Duplicate template slug")
  })
})

describe("the shipped catalog", () => {
  it("is published once, public and featured; publishing it again changes nothing, a changed template gets a new version", async () => {
    const shipped = await Catalog.shipped()
    const first = await runtime.runPromise(Templates.use((t) => t.publishShipped(shipped)))
    assert.deepStrictEqual(first.map((o) => [o.slug, o.outcome]), shipped.map((t) => [t.slug, "published"]))
    const again = await runtime.runPromise(Templates.use((t) => t.publishShipped(shipped)))
    assert.deepStrictEqual(again.map((o) => o.outcome), shipped.map(() => "unchanged"))
    const listed = await request("GET", "/v0/templates?featured=true", stranger)
    assert.deepStrictEqual((listed.body!["templates"] as Array<{ slug: string }>).map((t) => t.slug), ["code-reviewer", "daily-briefing", "research-assistant"])
    for (const template of listed.body!["templates"] as Array<Record<string, unknown>>) {
      assert.include(template, { visibility: "public", featured: true, status: "published", userId: "cairn", gitUrl: null, version: 1 })
    }
    const changed = shipped.map((t) =>
      t.slug !== "code-reviewer" ? t : { ...t, files: t.files.map((f) => (f.path === "SOUL.md" ? { ...f, content: new TextEncoder().encode("Changed.") } : f)) }
    )
    const third = await runtime.runPromise(Templates.use((t) => t.publishShipped(changed)))
    assert.deepStrictEqual(third.map((o) => o.outcome), ["updated", "unchanged", "unchanged"])
    assert.strictEqual((await request("GET", "/v0/templates/code-reviewer", owner)).body!["template"].version, 2)
  })

  it("is seen by every workspace but changed by none: 403", async () => {
    const briefing = (await request("GET", "/v0/templates/daily-briefing", stranger)).body!["template"]
    assert.strictEqual(briefing.category, "productivity")
    expectError(await request("DELETE", `/v0/templates/${briefing.templateId}`, owner), 403, "Forbidden: only the template's publisher may change it")
    expectError(await request("PUT", `/v0/templates/${briefing.templateId}`, owner, { templateCid: briefing.snapshotCid }), 403, "Forbidden: only the template's publisher may change it")
  })

  it("leaves a slug someone else took alone", async () => {
    await publishFromGit(stranger, { slug: "squatted" })
    const outcomes = await runtime.runPromise(Templates.use((t) => t.publishShipped([{ slug: "squatted", files: [] }])))
    assert.deepStrictEqual(outcomes.map((o) => o.outcome), ["invalid"])
    const research = (await Catalog.shipped()).find((t) => t.slug === "research-assistant")!
    const taken = await runtime.runPromise(Templates.use((t) => t.publishShipped([{ ...research, slug: "squatted" }])))
    assert.deepStrictEqual(taken.map((o) => o.outcome), ["taken"])
  })
})

describe("listing", () => {
  it("shows public templates and the workspace's own, filtered by featured, category and submittedBy=me, with the categories", async () => {
    const all = (await request("GET", "/v0/templates", owner)).body!
    const slugs = (all["templates"] as Array<{ slug: string }>).map((t) => t.slug)
    assert.includeMembers(slugs, ["field-researcher", "research-assistant", "versioned"])
    assert.notInclude(slugs, "squatted")
    assert.deepStrictEqual(all["categories"], [...all["categories"]].sort())
    assert.includeMembers(all["categories"], ["engineering", "productivity", "research", "science"])
    // Featured templates come first.
    assert.deepStrictEqual(slugs.slice(0, 3), ["code-reviewer", "daily-briefing", "research-assistant"])
    const mine = (await request("GET", "/v0/templates?submittedBy=me", owner)).body!["templates"] as Array<{ slug: string; visibility: string }>
    assert.isTrue(mine.length > 0 && mine.every((t) => t.visibility === "workspace"))
    assert.notInclude(mine.map((t) => t.slug), "research-assistant")
    const science = (await request("GET", "/v0/templates?category=science", owner)).body!["templates"] as Array<{ slug: string }>
    assert.deepStrictEqual(science.map((t) => t.slug), ["guarded", "versioned"])
    const notFeatured = (await request("GET", "/v0/templates?featured=false", owner)).body!["templates"] as Array<{ featured: boolean }>
    assert.isTrue(notFeatured.every((t) => !t.featured))
    expectError(await request("GET", "/v0/templates?submittedBy=someone", owner), 400, "Validation failed: submittedBy can only be me")
    expectError(await request("GET", "/v0/templates"), 401, "Unauthorized", { reason: "missing-credentials" })
  })

  it("serves the manifest schema to anyone", async () => {
    const schema = await request("GET", "/v0/templates/schema/manifest.v1.json")
    assert.strictEqual(schema.status, 200)
    assert.strictEqual(schema.body!["$schema"], "https://json-schema.org/draft/2020-12/schema")
  })
})

describe("materializing a template for an agent", () => {
  it("gives its manifest and its workspace files, manifest.json left out", async () => {
    const template = (await request("GET", "/v0/templates/field-researcher", owner)).body!["template"]
    const materialized = await runtime.runPromise(Templates.use((t) => t.materialize(principalOf(ownerWorkspace), template.templateId)))
    assert.strictEqual(materialized.template.templateId, template.templateId)
    assert.strictEqual(materialized.manifest.agent.name, "Field Researcher")
    assert.deepStrictEqual(Object.fromEntries(materialized.files.map((f) => [f.path, text(f.content)])), { "IDENTITY.md": "# Field Researcher", "SOUL.md": "Be helpful." })
    assert.deepStrictEqual(materialized.rootFiles, [])
  })

  it("takes the workspace/ folder of Pinata's layout as the workspace, and keeps the rest apart", async () => {
    const pinata = makeRepository()
    pinata.commit({
      "manifest.json": manifest("Pinata Style", { scripts: { build: "bash setup.sh" } }),
      "README.md": "Listing text",
      "setup.sh": "echo setup",
      "workspace/SOUL.md": "soul",
      "workspace/memory/notes.md": "notes"
    })
    const created = (await request("POST", "/v0/templates", owner, { gitUrl: pinata.dir })).body!["template"]
    const materialized = await runtime.runPromise(Templates.use((t) => t.materialize(principalOf(ownerWorkspace), created.templateId)))
    assert.deepStrictEqual(Object.fromEntries(materialized.files.map((f) => [f.path, text(f.content)])), { "SOUL.md": "soul", "memory/notes.md": "notes" })
    assert.deepStrictEqual(materialized.rootFiles.map((f) => f.path).sort(), ["README.md", "setup.sh"])
  })

  it("is refused for another workspace's template or an archived one: Template not found", async () => {
    const template = (await request("GET", "/v0/templates/field-researcher", owner)).body!["template"]
    const other = await runtime.runPromise(Effect.flip(Templates.use((t) => t.materialize(principalOf("someone-else"), template.templateId))))
    assert.strictEqual(other.message, "Template not found")
    const archived = (await publishFromGit(owner, { slug: "archived-before-use" })).body!["template"]
    await request("DELETE", `/v0/templates/${archived.templateId}`, owner)
    const gone = await runtime.runPromise(Effect.flip(Templates.use((t) => t.materialize(principalOf(ownerWorkspace), archived.templateId))))
    assert.strictEqual(gone.message, "Template not found")
    const shipped = (await request("GET", "/v0/templates/research-assistant", owner)).body!["template"]
    const forAnyone = await runtime.runPromise(Templates.use((t) => t.materialize(principalOf("someone-else"), shipped.templateId)))
    assert.deepStrictEqual(forAnyone.files.map((f) => f.path).sort(), ["AGENTS.md", "IDENTITY.md", "SOUL.md"])
  })
})

describe("the admin API", () => {
  const files = (soul: string) => [
    { path: "manifest.json", contentBase64: Buffer.from(manifest("Operator Pick")).toString("base64") },
    { path: "SOUL.md", contentBase64: Buffer.from(soul).toString("base64") }
  ]

  it("publishes a public template from files, and a new version under the same slug", async () => {
    const created = await request("POST", "/admin/templates", TestRuntime.adminToken, { files: files("one"), slug: "operator-pick", featured: true })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const template = created.body!["data"].template
    assert.include(template, { slug: "operator-pick", visibility: "public", featured: true, userId: "admin", version: 1 })
    assert.strictEqual((await request("GET", "/v0/templates/operator-pick", stranger)).status, 200)
    const same = await request("POST", "/admin/templates", TestRuntime.adminToken, { files: files("one"), slug: "operator-pick", featured: true })
    assert.deepStrictEqual([same.status, same.body!["data"].created, same.body!["data"].changed, same.body!["data"].template.version], [200, false, false, 1])
    const next = await request("POST", "/admin/templates", TestRuntime.adminToken, { files: files("two"), slug: "operator-pick" })
    assert.deepStrictEqual([next.body!["data"].changed, next.body!["data"].template.version, next.body!["data"].template.featured], [true, 2, true])
  })

  it("refuses a workspace's slug, bad input and anyone but the admin; archives any template", async () => {
    expectError(await request("POST", "/admin/templates", TestRuntime.adminToken, { files: files("x"), slug: "field-researcher" }), 409, "Duplicate template slug")
    expectError(await request("POST", "/admin/templates", TestRuntime.adminToken, { slug: "nothing" }), 400, "Validation failed: give exactly one of files, gitUrl and templateCid")
    expectError(await request("POST", "/admin/templates", TestRuntime.adminToken, { files: [{ path: "../x", contentBase64: "" }] }), 400, /^Validation failed: "\.\.\/x": path must not/, {
      validationErrors: [`"../x": path must not have empty, . or .. segments`, "manifest.json: missing (it must be at the template's root)"]
    })
    expectError(await request("POST", "/admin/templates", owner, { files: files("x") }), 401, "Unauthorized", { reason: "wrong-admin-token" })
    const pick = (await request("GET", "/v0/templates/operator-pick", owner)).body!["template"]
    assert.strictEqual((await request("DELETE", `/admin/templates/${pick.templateId}`, TestRuntime.adminToken)).status, 200)
    expectError(await request("GET", "/v0/templates/operator-pick", owner), 404, "Template not found")
    expectError(await request("DELETE", "/admin/templates/nope", TestRuntime.adminToken), 404, "Template not found")
  })
})

describe("on an installation that keeps repositories on its disk to itself (the default)", () => {
  const closed = TestRuntime.makeTestApi()
  afterAll(closed.dispose)

  it("refuses a workspace's local repository, and lets the admin API publish it", async () => {
    const token = (await closed.key(await closed.workspace(1))).token
    const refused = await closed.request("POST", "/v0/templates", token, { gitUrl, path: "templates/helper" })
    expectError(refused, 400, `Validation failed: could not read ${gitUrl}: repositories on this server's disk are not allowed; use an https:// URL`, {
      validationErrors: [`could not read ${gitUrl}: repositories on this server's disk are not allowed; use an https:// URL`]
    })
    assert.deepStrictEqual(refused.body!["validationErrors"], [`could not read ${gitUrl}: repositories on this server's disk are not allowed; use an https:// URL`])
    expectError(await closed.request("POST", "/v0/templates", token, { gitUrl: "http://127.0.0.1:1/repo.git" }), 400, /repositories on this server's own network are not allowed$/, {
      validationErrors: ["could not read http://127.0.0.1:1/repo.git: repositories on this server's own network are not allowed"]
    })
    const validated = await closed.request("POST", "/v0/templates/validate", token, { gitUrl: repo.dir })
    assert.deepStrictEqual([validated.status, validated.body!["valid"]], [200, false])
    const published = await closed.request("POST", "/admin/templates", TestRuntime.adminToken, { gitUrl, path: "templates/helper" })
    assert.strictEqual(published.status, 201, JSON.stringify(published.body))
    assert.include(published.body!["data"].template, { visibility: "public", gitUrl, slug: "field-researcher" })
    const listed = (await closed.request("GET", "/v0/templates", token)).body!
    assert.deepStrictEqual((listed["templates"] as Array<{ slug: string }>).map((t) => t.slug), ["field-researcher"])
  })
})
