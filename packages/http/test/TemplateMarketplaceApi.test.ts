/**
 * The rest of Pinata's templates surface through the real routes: `GET /v0/public-templates` (the marketplace,
 * without credentials: public templates only, never a workspace's own), and `POST /v0/templates/branches` and
 * `…/refs` (what a repository offers to publish from), read from a real repository served over git's smart HTTP
 * on loopback and from one on disk, each only where publishing from it is allowed.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { makeRepository, serveRepositories } from "@cairn/templates/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

const manifest = (name: string) =>
  JSON.stringify({ version: 1, agent: { name, description: `${name} helps` }, category: "research", tags: ["test"] })

const repo = makeRepository()
repo.commit({ "manifest.json": manifest("Branchy"), "SOUL.md": "Be brief." })
repo.git("branch", "dev")
repo.git("branch", "release/1")
repo.git("tag", "v1")
repo.git("tag", "-a", "v2", "-m", "annotated")

describe("with repositories on this machine allowed (an operator's installation)", () => {
  const { request, workspace, key, dispose } = TestRuntime.makeTestApi({ allowLocalGit: true })
  const { expectError } = ApiKit
  let owner: string
  let served: { readonly url: string; readonly close: () => Promise<void> }
  let remoteUrl: string

  beforeAll(async () => {
    owner = (await key(await workspace(5))).token
    served = await serveRepositories(Path.dirname(repo.dir))
    remoteUrl = `${served.url}/${Path.basename(repo.dir)}`
  }, 60_000)
  afterAll(async () => {
    await served?.close()
    await dispose()
  })

  it("lists a remote repository's branches and tags from its advertisement", async () => {
    const branches = await request("POST", "/v0/templates/branches", owner, { gitUrl: remoteUrl })
    assert.strictEqual(branches.status, 200, JSON.stringify(branches.body))
    assert.deepStrictEqual(branches.body, { branches: ["dev", "main", "release/1"] })
    assert.deepStrictEqual((await request("POST", "/v0/templates/refs", owner, { gitUrl: remoteUrl })).body, {
      branches: ["dev", "main", "release/1"],
      tags: ["v1", "v2"]
    })
  })

  it("lists a repository on disk the same way", async () => {
    const local = await request("POST", "/v0/templates/refs", owner, { gitUrl: pathToFileURL(repo.dir).toString() })
    assert.deepStrictEqual(local.body, { branches: ["dev", "main", "release/1"], tags: ["v1", "v2"] })
  })

  it("refuses what is not a repository, and bad bodies", async () => {
    const missing = await request("POST", "/v0/templates/branches", owner, { gitUrl: `${served.url}/nothing-here` })
    assert.strictEqual(missing.status, 400)
    assert.match(missing.body!["error"], /^Validation failed: could not read /)
    expectError(await request("POST", "/v0/templates/branches", owner, { gitUrl: "ftp://example.com/x.git" }), 400,
      "Validation failed: could not read ftp://example.com/x.git: only https:// and http:// repositories are supported")
    const empty = await request("POST", "/v0/templates/refs", owner, { gitUrl: "" })
    assert.strictEqual(empty.status, 400)
    assert.match(empty.body!["error"], /^Validation failed: /)
    assert.strictEqual((await request("POST", "/v0/templates/refs", undefined, { gitUrl: remoteUrl })).status, 401)
  })

  it("shows anyone the public templates, and never a workspace's own", async () => {
    const files = [{ path: "manifest.json", contentBase64: Buffer.from(manifest("Market Pick")).toString("base64") }]
    const published = await request("POST", "/admin/templates", TestRuntime.adminToken, { files, slug: "market-pick", featured: true })
    assert.strictEqual(published.status, 201, JSON.stringify(published.body))
    const own = await request("POST", "/v0/templates", owner, { gitUrl: pathToFileURL(repo.dir).toString(), name: "Private Branchy" })
    assert.strictEqual(own.status, 201, JSON.stringify(own.body))
    assert.strictEqual(own.body!["template"].visibility, "workspace")

    const market = await request("GET", "/v0/public-templates", undefined)
    assert.strictEqual(market.status, 200, JSON.stringify(market.body))
    const slugs = (market.body!["templates"] as Array<{ slug: string; visibility: string }>).map((t) => t.slug)
    assert.include(slugs, "market-pick")
    assert.notInclude(slugs, own.body!["template"].slug)
    assert.isTrue((market.body!["templates"] as Array<{ visibility: string }>).every((t) => t.visibility === "public"))
    assert.include(market.body!["categories"], "research")
    // The owner's own list has both.
    const mine = (await request("GET", "/v0/templates", owner)).body!["templates"] as Array<{ slug: string }>
    assert.includeMembers(mine.map((t) => t.slug), ["market-pick", own.body!["template"].slug])

    const featured = (await request("GET", "/v0/public-templates?featured=true", undefined)).body!["templates"] as Array<{ featured: boolean }>
    assert.isTrue(featured.length > 0 && featured.every((t) => t.featured))
    expectError(await request("GET", "/v0/public-templates?featured=maybe", undefined), 400, "Validation failed: featured must be true or false")
  })
})

describe("with repositories on this machine refused (the default)", () => {
  const { request, workspace, key, dispose } = TestRuntime.makeTestApi()
  afterAll(dispose)

  it("refuses a repository on disk or on the server's own network", async () => {
    const owner = (await key(await workspace(5))).token
    ApiKit.expectError(await request("POST", "/v0/templates/branches", owner, { gitUrl: pathToFileURL(repo.dir).toString() }), 400,
      `Validation failed: could not read ${pathToFileURL(repo.dir).toString()}: repositories on this server's disk are not allowed; use an https:// URL`)
    ApiKit.expectError(await request("POST", "/v0/templates/refs", owner, { gitUrl: "http://127.0.0.1:9/x.git" }), 400,
      "Validation failed: could not read http://127.0.0.1:9/x.git: repositories on this server's own network are not allowed")
  })
})
