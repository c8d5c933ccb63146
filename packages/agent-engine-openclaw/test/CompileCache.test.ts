/**
 * The fill of an engine version's compile cache (CompileCache.ts), on the stand-in engine (fake-openclaw.mjs, whose
 * gateway serves /readyz and exits on SIGTERM): what a fill leaves (read only, linked under the sandbox user's
 * name, nothing staged), that a filled cache is not filled again, and that a fill that fails leaves no cache, so
 * gateways start as before. CompileCache.int.test.ts has the real engine, its sandbox and an agent attacking it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as CompileCache from "../src/CompileCache.ts"
import * as HostEnvironment from "../src/HostEnvironment.ts"
import { sandboxUid } from "../src/Sandbox.ts"

const host = HostEnvironment.make(undefined)
const options: CompileCache.Options = { nodePath: host.nodePath, baseEnv: host.baseEnv, readyTimeoutMs: 30_000 }
const fakeOpenclaw = pathToFileURL(Path.join(import.meta.dirname, "fixtures", "fake-openclaw.mjs")).href

/** An install dir whose `openclaw.mjs` is `source`, as fake-npm.mjs installs it. */
const installWith = (source: string) => {
  const installDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-compile-cache-"))
  const entry = Path.join(installDir, "node_modules", "openclaw", "openclaw.mjs")
  Fs.mkdirSync(Path.dirname(entry), { recursive: true })
  Fs.writeFileSync(entry, source)
  return { installDir, entry }
}

/** Every entry under `dir`: its kind and permission bits. */
const modes = (dir: string): Array<{ readonly path: string; readonly kind: string; readonly mode: number }> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    const stat = Fs.lstatSync(path)
    const kind = entry.isSymbolicLink() ? "link" : entry.isDirectory() ? "dir" : "file"
    const here = { path, kind, mode: stat.mode & 0o777 }
    return entry.isDirectory() ? [here, ...modes(path)] : [here]
  })

describe("CompileCache.fill", () => {
  it.effect("fills the cache by a gateway's start and stop, read only, linked for the sandbox's user, nothing staged", () =>
    Effect.gen(function*() {
      const { installDir, entry } = installWith(`import ${JSON.stringify(fakeOpenclaw)}\n`)
      const dir = CompileCache.cacheDir(installDir, host.nodePath)
      assert.deepStrictEqual(CompileCache.environment(dir), {}, "no cache yet: a start as before")
      yield* CompileCache.fill(options, installDir, entry)

      const entries = modes(dir)
      const files = entries.filter((e) => e.kind === "file")
      assert.isAbove(files.length, 0)
      for (const file of files) assert.strictEqual(file.mode, 0o444, file.path)
      for (const folder of entries.filter((e) => e.kind === "dir")) assert.strictEqual(folder.mode, 0o555, folder.path)
      assert.strictEqual(Fs.statSync(dir).mode & 0o777, 0o555)
      // Node's folder is named after the user that reads it: the sandbox's finds it through a link.
      const tagged = Fs.readdirSync(dir).filter((name) => !name.endsWith(`-${sandboxUid}`))
      assert.lengthOf(tagged, 1)
      const linked = `${tagged[0]!.replace(/-\d+$/, "")}-${sandboxUid}`
      assert.strictEqual(Fs.readlinkSync(Path.join(dir, linked)), tagged[0])
      // Nothing left beside it.
      assert.deepStrictEqual(Fs.readdirSync(Path.dirname(dir)), [Path.basename(dir)])
      assert.deepStrictEqual(CompileCache.environment(dir), { NODE_COMPILE_CACHE: dir, OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED: "1" })

      // Filled once: a second fill leaves it as it is.
      const before = Fs.statSync(Path.join(dir, tagged[0]!)).mtimeMs
      yield* CompileCache.fill(options, installDir, entry)
      assert.strictEqual(Fs.statSync(Path.join(dir, tagged[0]!)).mtimeMs, before)
      Fs.chmodSync(dir, 0o755)
      Fs.chmodSync(Path.join(dir, tagged[0]!), 0o755)
      Fs.rmSync(installDir, { recursive: true, force: true })
    }), 60_000)

  it.effect("leaves no cache when the gateway does not come up, so its gateways start without one", () =>
    Effect.gen(function*() {
      const { installDir, entry } = installWith("process.exit(3)\n")
      const error = yield* Effect.flip(CompileCache.fill(options, installDir, entry))
      assert.include(error.message, "exited (exit code 3) before it was ready")
      assert.isFalse(Fs.existsSync(CompileCache.cacheDir(installDir, host.nodePath)))
      assert.deepStrictEqual(Fs.readdirSync(Path.join(installDir, "compile-cache")), [], "nothing staged is left")
      Fs.rmSync(installDir, { recursive: true, force: true })
    }), 60_000)
})
