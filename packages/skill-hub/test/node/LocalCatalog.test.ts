import type { SkillHub } from "@cairn/skill-hub"
import { LocalCatalog } from "@cairn/skill-hub/node"
import { writeCatalog } from "@cairn/skill-hub/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { byPath, tempDir } from "../Fixtures.ts"
import { sampleCatalog } from "../SampleCatalog.ts"

const withCatalog = <A, E>(use: (hub: SkillHub["Service"], dir: string) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    yield* writeCatalog(dir, sampleCatalog)
    return yield* use(yield* LocalCatalog.make({ dir }), dir)
  })

const slugs = (page: { readonly skills: ReadonlyArray<{ readonly slug: string }> }) => page.skills.map((skill) => skill.slug)

describe("LocalCatalog", () => {
  it.effect("a missing or empty directory is an empty catalog", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      for (const catalog of [join(dir, "nothing-here"), dir]) {
        const hub = yield* LocalCatalog.make({ dir: catalog })
        assert.deepStrictEqual(yield* hub.search({}), { skills: [], nextCursor: null })
        assert.strictEqual((yield* Effect.flip(hub.get("weather")))._tag, "HubSkillNotFound")
      }
    }))

  it.effect("names itself by its directory's file URL", () =>
    withCatalog((hub, dir) => Effect.sync(() => assert.strictEqual(hub.registry, pathToFileURL(dir).href))))

  it.effect("picks the highest semver as the newest version, not the latest written", () =>
    withCatalog((hub) =>
      Effect.gen(function*() {
        const skill = yield* hub.get("git-helper")
        assert.strictEqual(skill.version, "1.10.0")
        assert.deepStrictEqual(skill.versions?.map((v) => v.version), ["1.10.0", "1.2.0"])
        const mail = yield* hub.get("alpha-mail")
        assert.strictEqual(mail.version, "1.0.1-beta.1")
      })))

  it.effect("reads hub.json, dates from the version folders' times", () =>
    withCatalog((hub) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* hub.get("git-helper"), {
          slug: "git-helper",
          name: "Git Helper",
          summary: "Commits for you",
          version: "1.10.0",
          owner: "ada",
          category: "dev",
          tags: ["git", "vcs"],
          installs: 40,
          featured: true,
          createdAt: "2026-01-01T00:00:00.000Z",
          updatedAt: "2026-03-01T00:00:00.000Z",
          versions: [
            { version: "1.10.0", createdAt: "2026-03-01T00:00:00.000Z", changelog: "" },
            { version: "1.2.0", createdAt: "2026-01-01T00:00:00.000Z", changelog: "" }
          ]
        })
      })))

  it.effect("falls back to SKILL.md front matter, then to the slug, for what hub.json leaves out", () =>
    withCatalog((hub) =>
      Effect.gen(function*() {
        const weather = yield* hub.get("weather")
        assert.deepInclude(weather, {
          name: "weather",
          summary: "Tells the weather",
          owner: null,
          category: null,
          tags: [],
          installs: 0,
          featured: false
        })
        const zeta = yield* hub.get("zeta-notes")
        assert.deepInclude(zeta, { name: "zeta", summary: "Keeps notes", category: "writing" })
        assert.deepInclude(yield* hub.get("no-front-matter"), { name: "no-front-matter", summary: "" })
      })))

  it.effect("ignores an invalid hub.json, folders that are not slugs and versions that are not semver", () =>
    withCatalog((hub, dir) =>
      Effect.gen(function*() {
        yield* Effect.promise(async () => {
          await fs.writeFile(join(dir, "weather", "hub.json"), JSON.stringify({ installs: "many" }))
          await fs.mkdir(join(dir, "Not A Slug", "1.0.0"), { recursive: true })
          await fs.mkdir(join(dir, "weather", "latest"), { recursive: true })
          await fs.mkdir(join(dir, "weather", "v9.0.0"), { recursive: true })
          await fs.writeFile(join(dir, "stray-file"), "x")
        })
        const weather = yield* hub.get("weather")
        assert.strictEqual(weather.version, "0.1.0")
        assert.strictEqual(weather.installs, 0)
        const page = yield* hub.search({ limit: 100 })
        assert.sameMembers(slugs(page), ["git-helper", "weather", "zeta-notes", "alpha-mail", "no-front-matter"])
      })))

  describe("search", () => {
    it.effect("sorts by installs by default, by updatedAt for newest, by name", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(
            slugs(yield* hub.search({})),
            ["alpha-mail", "git-helper", "zeta-notes", "no-front-matter", "weather"]
          )
          assert.deepStrictEqual(
            slugs(yield* hub.search({ sort: "newest" })),
            ["no-front-matter", "zeta-notes", "git-helper", "weather", "alpha-mail"]
          )
          assert.deepStrictEqual(
            slugs(yield* hub.search({ sort: "name" })),
            ["alpha-mail", "git-helper", "no-front-matter", "weather", "zeta-notes"]
          )
        })))

    it.effect("filters by q (slug, name, summary or tag, any case) and by category", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(slugs(yield* hub.search({ q: "VCS" })), ["git-helper"])
          assert.deepStrictEqual(slugs(yield* hub.search({ q: "mail" })), ["alpha-mail"])
          assert.deepStrictEqual(slugs(yield* hub.search({ q: "weather" })), ["weather"])
          assert.deepStrictEqual(slugs(yield* hub.search({ q: "notes" })), ["zeta-notes"])
          assert.deepStrictEqual(slugs(yield* hub.search({ category: "DEV" })), ["alpha-mail", "git-helper"])
          assert.deepStrictEqual(slugs(yield* hub.search({ q: "nothing matches this" })), [])
        })))

    it.effect("pages with an opaque cursor until nextCursor is null", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          const first = yield* hub.search({ sort: "name", limit: 2 })
          assert.deepStrictEqual(slugs(first), ["alpha-mail", "git-helper"])
          assert.isString(first.nextCursor)
          const second = yield* hub.search({ sort: "name", limit: 2, cursor: first.nextCursor! })
          assert.deepStrictEqual(slugs(second), ["no-front-matter", "weather"])
          const third = yield* hub.search({ sort: "name", limit: 2, cursor: second.nextCursor! })
          assert.deepStrictEqual(slugs(third), ["zeta-notes"])
          assert.isNull(third.nextCursor)
          assert.deepStrictEqual(yield* hub.search({ cursor: "not-a-cursor" }), { skills: [], nextCursor: null })
        })))

    it.effect("lists skills without their version history", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          const page = yield* hub.search({ q: "git" })
          assert.isUndefined(page.skills[0]!.versions)
        })))

    it.effect("caps a page at 100 and defaults to 20", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* writeCatalog(
          dir,
          Object.fromEntries(Array.from({ length: 105 }, (_, index) => [
            `skill-${String(index).padStart(3, "0")}`,
            { versions: { "1.0.0": { files: { "SKILL.md": "x" } } } }
          ]))
        )
        const hub = yield* LocalCatalog.make({ dir })
        assert.strictEqual((yield* hub.search({})).skills.length, 20)
        assert.strictEqual((yield* hub.search({ limit: 500 })).skills.length, 100)
      }))
  })

  describe("download", () => {
    it.effect("reads the newest version, or the one asked for, from disk", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          const newest = yield* hub.download("git-helper")
          assert.strictEqual(newest.version, "1.10.0")
          assert.deepStrictEqual(byPath(newest.files), sampleCatalog["git-helper"].versions["1.10.0"].files)
          const older = yield* hub.download("git-helper", "1.2.0")
          assert.deepStrictEqual(byPath(older.files), sampleCatalog["git-helper"].versions["1.2.0"].files)
        })))

    it.effect("an unknown skill or version is HubSkillNotFound", () =>
      withCatalog((hub) =>
        Effect.gen(function*() {
          const noSkill = yield* Effect.flip(hub.download("nope"))
          assert.strictEqual(noSkill.message, "Skill nope not found on the hub")
          const noVersion = yield* Effect.flip(hub.download("weather", "9.9.9"))
          assert.strictEqual(noVersion.message, "Skill weather has no version 9.9.9 on the hub")
          assert.strictEqual((yield* Effect.flip(hub.get("../etc"))).message, "Skill ../etc not found on the hub")
        })))

    it.effect("refuses a symbolic link in a version folder instead of following it", () =>
      withCatalog((hub, dir) =>
        Effect.gen(function*() {
          yield* Effect.promise(() => fs.symlink("/etc/passwd", join(dir, "weather", "0.1.0", "passwd")))
          const error = yield* Effect.flip(hub.download("weather"))
          assert.strictEqual(error.message, `Validation failed: the bundle's "passwd" is a symbolic link`)
        })))

    it.effect("applies the archive limits to what it reads", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* writeCatalog(dir, sampleCatalog)
        const fewFiles = yield* LocalCatalog.make({ dir, limits: { maxFiles: 1 } })
        assert.strictEqual(
          (yield* Effect.flip(fewFiles.download("git-helper"))).message,
          "Validation failed: the bundle has more than 1 files"
        )
        const fewBytes = yield* LocalCatalog.make({ dir, limits: { maxUnpackedBytes: 40 } })
        assert.strictEqual(
          (yield* Effect.flip(fewBytes.download("weather"))).message,
          "Validation failed: the bundle unpacks to more than 40 bytes"
        )
      }))
  })
})
