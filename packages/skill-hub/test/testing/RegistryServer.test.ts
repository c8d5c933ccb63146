import { Archive } from "@cairn/skill-hub"
import { RegistryServer, writeCatalog } from "@cairn/skill-hub/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { byPath, tempDir } from "../Fixtures.ts"
import { sampleCatalog } from "../SampleCatalog.ts"

const served = Effect.gen(function*() {
  const dir = yield* tempDir
  yield* writeCatalog(dir, sampleCatalog)
  return yield* RegistryServer.serve({ dir })
})

const call = (url: string, init?: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    const type = response.headers.get("content-type") ?? ""
    // The body as the server sent it; the assertions say what shape it must have.
    const body: any = type.startsWith("application/json")
      ? await response.json()
      : type === "application/zip"
      ? new Uint8Array(await response.arrayBuffer())
      : await response.text()
    return { status: response.status, type, body }
  })

const verdicts = (url: string, items: unknown) =>
  call(`${url}/api/v1/skills/-/security-verdicts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ items })
  })

describe("RegistryServer speaks ClawHub's protocol over a catalog", () => {
  it.live("resolves an install to an absolute download URL for the newest version", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const { body } = yield* call(`${url}/api/v1/skills/git-helper/install`)
      assert.deepStrictEqual(body, {
        ok: true,
        slug: "git-helper",
        installKind: "archive",
        archive: { version: "1.10.0", downloadUrl: `${url}/api/v1/download?slug=git-helper&version=1.10.0` }
      })
    }))

  it.live("serves each version as a zip with SKILL.md at its root", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const latest = yield* call(`${url}/api/v1/download?slug=git-helper`)
      assert.strictEqual(latest.type, "application/zip")
      assert.deepStrictEqual(
        byPath(yield* Archive.read(latest.body as Uint8Array)),
        sampleCatalog["git-helper"].versions["1.10.0"].files
      )
      const older = yield* call(`${url}/api/v1/download?slug=git-helper&version=1.2.0`)
      assert.deepStrictEqual(
        byPath(yield* Archive.read(older.body as Uint8Array)),
        sampleCatalog["git-helper"].versions["1.2.0"].files
      )
      assert.deepStrictEqual(yield* call(`${url}/api/v1/download?slug=git-helper&version=9.0.0`), {
        status: 404,
        type: "text/plain; charset=utf-8",
        body: "Version not found"
      })
    }))

  it.live("answers the detail the clawhub CLI requires, stats included", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const { body } = yield* call(`${url}/api/v1/skills/git-helper`)
      assert.deepInclude(body.skill, { slug: "git-helper", displayName: "Git Helper", topics: ["git", "vcs"], tags: { latest: "1.10.0" } })
      assert.deepInclude(body.skill.stats, { downloads: 40, installsAllTime: 40, versions: 2 })
      assert.deepStrictEqual(body.latestVersion, { version: "1.10.0", createdAt: Date.parse("2026-03-01T00:00:00.000Z"), changelog: "", license: null })
      assert.deepStrictEqual(body.owner, { handle: "ada", displayName: "ada", image: null })
      assert.strictEqual((yield* call(`${url}/api/v1/skills/nope`)).status, 404)
    }))

  it.live("lists versions, and one version with its files' hashes", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const versions = yield* call(`${url}/api/v1/skills/git-helper/versions`)
      assert.deepStrictEqual(versions.body.items.map((item: { version: string }) => item.version), ["1.10.0", "1.2.0"])
      const one = yield* call(`${url}/api/v1/skills/git-helper/versions/1.2.0`)
      assert.deepStrictEqual(one.body.version.files.map((file: { path: string }) => file.path), ["SKILL.md", "scripts/commit.sh"])
      assert.match(one.body.version.files[0].sha256, /^[0-9a-f]{64}$/)
    }))

  it.live("gives a passing verdict with the overview and audit URL OpenClaw requires, and a failing one for a missing version", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const { body } = yield* verdicts(url, [
        { slug: "weather", version: "0.1.0" },
        { slug: "weather", version: "9.9.9" },
        { slug: "nope", version: "1.0.0" }
      ])
      assert.strictEqual(body.schema, "clawhub.skill.security-verdicts.v1")
      const [pass, noVersion, noSkill] = body.items
      assert.deepInclude(pass, { ok: true, decision: "pass", slug: "weather", version: "0.1.0", publisherHandle: "local" })
      assert.isString(pass.overview)
      assert.isString(pass.securityAuditUrl)
      assert.deepStrictEqual(pass.security.passed, true)
      assert.deepInclude(noVersion, { ok: false, decision: "fail", reasons: ["version.not_found"], version: null })
      assert.deepInclude(noSkill, { ok: false, reasons: ["skill.not_found"] })
      assert.strictEqual((yield* verdicts(url, [])).status, 400)
    }))

  it.live("resolves a bundle fingerprint to the version it came from", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const files = Object.entries(sampleCatalog["git-helper"].versions["1.2.0"].files).map(([path, content]) => ({
        path,
        content: new TextEncoder().encode(content)
      }))
      const hash = RegistryServer.fingerprint(files)
      const { body } = yield* call(`${url}/api/v1/resolve?slug=git-helper&hash=${hash}`)
      assert.deepStrictEqual(body, { slug: "git-helper", match: { version: "1.2.0" }, latestVersion: { version: "1.10.0" } })
    }))

  it.live("lists with ClawHub's sorts, refuses an unknown one, and answers trending and the well-known file", () =>
    Effect.gen(function*() {
      const { url } = yield* served
      const byDownloads = yield* call(`${url}/api/v1/skills?sort=downloads&limit=2`)
      assert.deepStrictEqual(byDownloads.body.items.map((item: { slug: string }) => item.slug), ["alpha-mail", "git-helper"])
      assert.isString(byDownloads.body.nextCursor)
      assert.deepStrictEqual(yield* call(`${url}/api/v1/skills?sort=sideways`), {
        status: 400,
        type: "text/plain; charset=utf-8",
        body: "Invalid sort query parameter"
      })
      const trending = yield* call(`${url}/api/v1/trending?kind=skills&limit=1`)
      assert.deepInclude(trending.body.items[0], { slug: "alpha-mail", source: "clawhub" })
      assert.deepStrictEqual(trending.body.items[0].install.reference, "@local/alpha-mail")
      assert.deepStrictEqual((yield* call(`${url}/.well-known/clawhub.json`)).body.apiBase, url)
    }))

  it.live("stops listening when its scope closes", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.map(served, (server) => server.url))
      const refused = yield* Effect.promise(() => fetch(`${url}/api/v1/skills`).then(() => false, () => true))
      assert.isTrue(refused)
    }))
})
