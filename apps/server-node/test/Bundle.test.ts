/**
 * The server's bundle (src/Bundle.ts, src/BundleBuild.ts): used only while every file it was built from is
 * unchanged; a server started from it does what one started from the sources does (files found beside their
 * modules: migrations, the docs page's script, the shipped templates; a file upload); a start from the sources builds
 * it once ready; `CAIRN_BUNDLE=off` ignores it. Tests otherwise run the sources (vitest.shared.ts).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Bundle from "../src/Bundle.ts"
import { build } from "../src/BundleBuild.ts"
import { cli, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const scratch = mkdtempSync(join(tmpdir(), "cairn-bundle-"))
const bundleDir = join(scratch, "bundle")
const marker = "cairn-test: started from the bundle"
let manifest: Bundle.Manifest

beforeAll(async () => {
  manifest = await build(bundleDir)
  // The entry is no input of its own: a line added to it says which code a start ran.
  appendFileSync(join(bundleDir, manifest.folder, manifest.entry), `\nconsole.log(${JSON.stringify(marker)})\n`)
}, 120_000)

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const stopped = async (server: ServerProcess) => {
  server.child.kill("SIGTERM")
  assert.strictEqual(await server.exited, 0, server.output())
}

describe("the server's bundle", () => {
  it("is current only while every input keeps its size and modification time, on the same Node version, and its folder is there", () => {
    const file = join(scratch, "input.ts")
    writeFileSync(file, "export const a = 1\n")
    const { size, mtimeMs } = statSync(file)
    const of = (inputs: Bundle.Manifest["inputs"], node = process.version): Bundle.Manifest => ({
      version: Bundle.manifestVersion,
      node,
      folder: "f",
      entry: "server.mjs",
      inputs
    })
    assert.isTrue(Bundle.unchanged(of([[file, size, mtimeMs]])))
    assert.isFalse(Bundle.unchanged(of([[file, size, mtimeMs]], "v0.0.0")), "another Node version")
    utimesSync(file, new Date(), new Date(mtimeMs + 5_000))
    assert.isFalse(Bundle.unchanged(of([[file, size, mtimeMs]])), "touched")
    writeFileSync(file, "export const a = 12\n")
    assert.isFalse(Bundle.unchanged(of([[file, size, mtimeMs]])), "edited")
    assert.isFalse(Bundle.unchanged(of([[join(scratch, "gone.ts"), size, mtimeMs]])), "deleted")
    // A manifest whose bundle folder is gone.
    const dir = join(scratch, "no-folder")
    mkdirSync(dir)
    writeFileSync(join(dir, Bundle.manifestFile), JSON.stringify(of([[file, statSync(file).size, statSync(file).mtimeMs]])))
    const before = { dir: process.env["CAIRN_BUNDLE_DIR"], on: process.env["CAIRN_BUNDLE"] }
    process.env["CAIRN_BUNDLE_DIR"] = dir
    process.env["CAIRN_BUNDLE"] = "on"
    try {
      assert.isUndefined(Bundle.fresh())
      mkdirSync(join(dir, "f"))
      writeFileSync(join(dir, "f", "server.mjs"), "")
      assert.strictEqual(Bundle.fresh(), pathToFileURL(join(dir, "f", "server.mjs")).href)
    } finally {
      for (const [name, value] of [["CAIRN_BUNDLE_DIR", before.dir], ["CAIRN_BUNDLE", before.on]] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })

  it("records the server's sources, the packages' modules, PGlite's module and the installed packages' lock", () => {
    const inputs = new Set(manifest.inputs.map(([path]) => path))
    assert.isAbove(inputs.size, 1_000)
    for (const file of ["apps/server-node/src/Server.ts", "packages/http/src/DocsRoutes.ts", "packages/templates/src/node/Catalog.ts", "packages/http/package.json"]) {
      assert.isTrue(inputs.has(join(Bundle.root, file)), file)
    }
    assert.isTrue([...inputs].some((path) => path.includes("/node_modules/effect/")))
    assert.isTrue([...inputs].some((path) => path.includes("/node_modules/@electric-sql/pglite/")), "the unbundled PGlite")
    const entry = readFileSync(join(bundleDir, manifest.folder, manifest.entry), "utf8")
    assert.notInclude(entry, "import.meta.url", "each module's import.meta is its own file's")
    assert.include(entry, JSON.stringify(`${Bundle.root}/packages/event-store-pg/src/PgliteWorker.ts`), "main.ts's own modules are shared")
  })

  it("starts the server, which finds its files, takes an upload, and lists the shipped templates", async () => {
    const dataDir = join(scratch, "data")
    const server = await startServer({ DATA_DIR: dataDir, CAIRN_BUNDLE: "on", CAIRN_BUNDLE_DIR: bundleDir })
    try {
      await waitUntilServing(server)
      assert.include(server.output(), marker)
      // Found and valid: published on a new database, unchanged on one an earlier test's server published them to.
      assert.match(server.output(), /Shipped templates: code-reviewer (published|unchanged), daily-briefing (published|unchanged), research-assistant (published|unchanged)/)
      assert.strictEqual((await fetch(`${server.url}/readyz`)).status, 200)
      const script = await fetch(`${server.url}/docs/scalar.js`)
      assert.strictEqual(script.status, 200)
      assert.isAbove((await script.arrayBuffer()).byteLength, 100_000)
      const env = { url: server.url, dataDir }
      const workspaceId = cli(env, "workspace", "create", "--name", "Acme")
      const token = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write,org:agents")
      const form = new FormData()
      form.append("file", new File(["hello world\n"], "hello.txt", { type: "text/plain" }))
      form.append("network", "public")
      const uploaded = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
      assert.strictEqual(uploaded.status, 200)
      assert.strictEqual(((await uploaded.json()) as { data: { cid: string } }).data.cid, "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4")
      const templates = await fetch(`${server.url}/v0/templates`, { headers: { authorization: `Bearer ${token}` } })
      assert.strictEqual(templates.status, 200)
      const slugs = ((await templates.json()) as { templates: Array<{ slug: string }> }).templates.map((t) => t.slug)
      assert.includeMembers(slugs, ["code-reviewer", "daily-briefing", "research-assistant"])
    } finally {
      await stopped(server)
    }
  })

  it("is ignored with CAIRN_BUNDLE=off", async () => {
    const server = await startServer({ DATA_DIR: join(scratch, "off"), CAIRN_BUNDLE: "off", CAIRN_BUNDLE_DIR: bundleDir })
    try {
      await waitUntilServing(server)
      assert.notInclude(server.output(), marker)
    } finally {
      await stopped(server)
    }
  })

  it("is built for the next start once a start from the sources is ready", async () => {
    const empty = join(scratch, "built-later")
    const server = await startServer({ DATA_DIR: join(scratch, "later"), CAIRN_BUNDLE: "on", CAIRN_BUNDLE_DIR: empty })
    try {
      await waitUntilServing(server)
      assert.notInclude(server.output(), marker)
    } finally {
      await stopped(server)
    }
    const manifestFile = join(empty, Bundle.manifestFile)
    const deadline = Date.now() + 90_000
    const building = () => !existsSync(manifestFile) || existsSync(join(empty, "building"))
    while (building() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
    const built: Bundle.Manifest = JSON.parse(readFileSync(manifestFile, "utf8"))
    assert.isTrue(existsSync(join(empty, built.folder, built.entry)))
    assert.isFalse(existsSync(join(empty, "building")), "the build's lock is released")
    assert.isTrue(Bundle.unchanged(built))
  }, 120_000)
})
