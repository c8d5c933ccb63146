import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { fetchGitTemplate, isInternalAddress } from "../../src/node/IsomorphicGitRepositories.ts"
import { makeRepository, serveRepositories } from "../../src/testing/index.ts"

const decoded = (files: ReadonlyArray<{ path: string; content: Uint8Array; kind?: string }>) =>
  Object.fromEntries(files.map((f) => [f.path, f.kind === "symlink" ? `-> ${new TextDecoder().decode(f.content)}` : new TextDecoder().decode(f.content)]))
const failure = <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E>) => Effect.flip(effect).pipe(Effect.map((e) => e.message))

const repo = makeRepository()
const first = repo.commit({ "templates/helper/manifest.json": "{\"version\":1}", "templates/helper/SOUL.md": "one", "README.md": "root" })
repo.git("tag", "v1")
repo.git("checkout", "-q", "-b", "dev")
const onDev = repo.commit({ "templates/helper/SOUL.md": "dev" })
repo.git("checkout", "-q", "main")
Fs.symlinkSync("SOUL.md", Path.join(repo.dir, "templates/helper/link.md"))
const second = repo.commit({ "templates/helper/SOUL.md": "two", "templates/helper/notes/a.md": "a" })
// The working tree changes after the commit: what is read is the commit, not the files on disk.
Fs.writeFileSync(Path.join(repo.dir, "templates/helper/SOUL.md"), "uncommitted")

describe("a template read from a local repository", () => {
  it.effect("is the commit's tree under the path, at HEAD, a branch, a tag or a commit id, with the commit id", () =>
    Effect.gen(function*() {
      const head = yield* fetchGitTemplate({ gitUrl: pathToFileURL(repo.dir).toString(), path: "templates/helper" }, { allowLocal: true })
      assert.strictEqual(head.commitSha, second)
      assert.deepStrictEqual(decoded(head.files), { "SOUL.md": "two", "link.md": "-> SOUL.md", "manifest.json": "{\"version\":1}", "notes/a.md": "a" })
      const dev = yield* fetchGitTemplate({ gitUrl: repo.dir, branch: "dev", path: "/templates/helper/" }, { allowLocal: true })
      assert.deepStrictEqual([dev.commitSha, decoded(dev.files)["SOUL.md"]], [onDev, "dev"])
      const tag = yield* fetchGitTemplate({ gitUrl: repo.dir, ref: "refs/tags/v1", path: "templates/helper" }, { allowLocal: true })
      assert.deepStrictEqual([tag.commitSha, decoded(tag.files)["SOUL.md"]], [first, "one"])
      const byId = yield* fetchGitTemplate({ gitUrl: repo.dir, ref: first }, { allowLocal: true })
      assert.deepStrictEqual(Object.keys(decoded(byId.files)).sort(), ["README.md", "templates/helper/SOUL.md", "templates/helper/manifest.json"])
    }))

  it.effect("is refused when local repositories are not allowed, or the ref, path or repository does not exist", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* failure(fetchGitTemplate({ gitUrl: repo.dir }, { allowLocal: false })), `could not read ${repo.dir}: repositories on this server's disk are not allowed; use an https:// URL`)
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: "file:///etc" }, { allowLocal: false })), "repositories on this server's disk are not allowed")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: repo.dir, branch: "nope" }, { allowLocal: true })), "no branch, tag or commit named nope")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: repo.dir, path: "missing" }, { allowLocal: true })), "no folder missing in that commit")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: repo.dir, path: "../x" }, { allowLocal: true })), "path must be a folder inside the repository")
      for (const path of ["a/../../x", "a\\b", "C:/x", "a\nb"]) {
        assert.include(yield* failure(fetchGitTemplate({ gitUrl: repo.dir, path }, { allowLocal: true })), "path must be a folder inside the repository", path)
      }
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: Path.dirname(repo.dir) }, { allowLocal: true })), "not a git repository")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: "relative/repo" }, { allowLocal: true })), "gitUrl must be an https:// URL")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: "git@github.com:o/r.git" }, { allowLocal: false })), "gitUrl must be an https:// URL")
      assert.include(yield* failure(fetchGitTemplate({ gitUrl: "ftp://example.com/r.git" }, { allowLocal: false })), "only https:// and http:// repositories")
    }))
})

describe("a template cloned over HTTP", () => {
  it.effect("is read from a shallow clone at HEAD, a branch or a tag, and from a full one at a commit id", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => serveRepositories(Path.dirname(repo.dir))),
      (server) =>
        Effect.gen(function*() {
          const gitUrl = `${server.url}/${Path.basename(repo.dir)}`
          const head = yield* fetchGitTemplate({ gitUrl, path: "templates/helper" }, { allowLocal: true })
          assert.deepStrictEqual([head.commitSha, decoded(head.files)["SOUL.md"]], [second, "two"])
          const dev = yield* fetchGitTemplate({ gitUrl, branch: "dev", path: "templates/helper" }, { allowLocal: true })
          assert.deepStrictEqual([dev.commitSha, decoded(dev.files)["SOUL.md"]], [onDev, "dev"])
          const tag = yield* fetchGitTemplate({ gitUrl, ref: "refs/tags/v1", path: "templates/helper" }, { allowLocal: true })
          assert.strictEqual(tag.commitSha, first)
          const byId = yield* fetchGitTemplate({ gitUrl, ref: first, path: "templates/helper" }, { allowLocal: true })
          assert.deepStrictEqual([byId.commitSha, decoded(byId.files)["SOUL.md"]], [first, "one"])
          assert.include(yield* failure(fetchGitTemplate({ gitUrl: `${gitUrl}-missing` }, { allowLocal: true })), "404")
          // The server is on loopback: only a trusted caller may make Cairn reach it.
          assert.include(yield* failure(fetchGitTemplate({ gitUrl }, { allowLocal: false })), "repositories on this server's own network are not allowed")
        }),
      (server) => Effect.promise(server.close)
    ))

  it("counts loopback, private, link-local and unspecified addresses as this server's networks", () => {
    for (const internal of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1"]) {
      assert.isTrue(isInternalAddress(internal), internal)
    }
    for (const external of ["8.8.8.8", "172.32.0.1", "140.82.112.3", "2606:4700::1111", "::ffff:8.8.8.8"]) assert.isFalse(isInternalAddress(external), external)
  })
})
