/**
 * The compile cache on the real engine, against a hostile tenant (decision 0054): the engine fills the version's
 * cache once, read only; a gateway in its sandbox starts with it, reads it, and answers as before; an agent with a
 * shell can read the cache but neither change, replace, remove nor add to it, so nothing it does there can run in
 * another agent's gateway; and a cache that does not match (stale, or garbage) only means Node compiles as it would
 * without one; and under SANDBOX=off, a gateway reads it too. Runs only with ENGINE_IT=openclaw (two gateways; the
 * first run also fills the cache, one more start).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { afterAll, assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as CompileCache from "../src/CompileCache.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { gatewayEnvironment, reserveGatewayPorts } from "../src/testing/index.ts"

const version = "2026.9.6"
const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const basePort = enabled ? reserveGatewayPorts(1) : 0
const unsandboxedPort = enabled ? reserveGatewayPorts(1) : 0
const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-openclaw-compile-cache-")) : ""
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines")
const installDir = Path.join(enginesDir, version)
const entryFile = Path.join(installDir, "node_modules", "openclaw", "openclaw.mjs")
const agentId = `cache-${Date.now().toString(36)}`

/** Every entry under `dir` with its kind, mode and bytes (or link target): what an attack must leave as it was. */
const digest = (dir: string): string => {
  const hash = Crypto.createHash("sha256")
  const walk = (path: string) => {
    const stat = Fs.lstatSync(path)
    hash.update(`${path} ${stat.mode} `)
    if (stat.isSymbolicLink()) hash.update(Fs.readlinkSync(path))
    else if (stat.isFile()) hash.update(Fs.readFileSync(path))
    else if (stat.isDirectory()) for (const name of Fs.readdirSync(path).sort()) walk(Path.join(path, name))
  }
  walk(dir)
  return hash.digest("hex")
}

if (enabled) {
  afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

  describe("the compile cache of a real engine version", () => {
    const engineLayer = OpenClawAgentEngine.layer({
      dataDir,
      enginesDir,
      versions: [version],
      basePort,
      startTimeout: "120 seconds",
      stopGrace: "15 seconds",
      compileCache: true
    })
    layer(Layer.fresh(engineLayer), { excludeTestServices: true, timeout: "400 seconds" })((it) => {
      const running = Effect.gen(function*() {
        const engine = yield* AgentEngine
        yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`token-${Date.now().toString(36)}`) })
        if ((yield* engine.status(agentId)).state !== "running") yield* engine.start(agentId)
        return engine
      })
      const sh = (command: string) =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          return yield* engine.exec(agentId, { command, timeoutMs: 120_000, maxOutputBytes: 1024 * 1024 })
        })
      const cache = CompileCache.cacheDir(installDir, process.execPath)

      it.effect("is filled once, read only, and the gateway starts with it, reads it and answers", () =>
        Effect.gen(function*() {
          const engine = yield* running
          assert.strictEqual((yield* engine.status(agentId)).state, "running")
          assert.strictEqual(Fs.statSync(cache).mode & 0o777, 0o555)
          const environment = gatewayEnvironment(Path.join(dataDir, "agents", agentId))
          assert.strictEqual(environment?.["NODE_COMPILE_CACHE"], cache)
          // It answers over its RPC as before: its own cron jobs, declared as it comes up.
          const deadline = Date.now() + 60_000
          let tasks = yield* engine.listTasks(agentId, { includeDisabled: true })
          while (tasks.length === 0 && Date.now() < deadline) {
            yield* Effect.sleep("500 millis")
            tasks = yield* engine.listTasks(agentId, { includeDisabled: true })
          }
          assert.isAbove(tasks.length, 0)
          // In the agent's sandbox, as its user: Node finds the cache and V8 takes its code.
          const read = yield* sh(
            `NODE_DEBUG_NATIVE=COMPILE_CACHE NODE_COMPILE_CACHE=${cache} OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED=1 ` +
              `${process.execPath} ${entryFile} --version 2>&1`
          )
          assert.strictEqual(read.exitCode, 0, read.stdout)
          assert.match(read.stdout, new RegExp(`reading cache from ${cache}/[^ ]+-1000/`), "the sandbox user's folder: the link")
          assert.match(read.stdout, /V8 code cache for ESM .*openclaw\.mjs was accepted/)
        }))

      it.effect("cannot be written by an agent from its shell: not changed, replaced, removed nor added to", () =>
        Effect.gen(function*() {
          yield* running
          const before = digest(cache)
          const tagged = Fs.readdirSync(cache).find((name) => !Fs.lstatSync(Path.join(cache, name)).isSymbolicLink())!
          const victim = Path.join(cache, tagged, Fs.readdirSync(Path.join(cache, tagged))[0]!)
          const attacks = {
            "add a file": `touch ${cache}/planted`,
            "overwrite an entry": `printf poison > ${victim}`,
            "append to an entry": `printf poison >> ${victim}`,
            "remove an entry": `rm -f ${victim}`,
            "make an entry writable": `chmod 666 ${victim}`,
            "make the folder writable": `chmod 777 ${cache}`,
            "replace the folder": `mv ${cache} ${cache}.old`,
            "point the user's folder elsewhere": `ln -sfn /tmp ${cache}/${tagged.replace(/-\d+$/, "")}-1000`,
            "add a folder for another user": `mkdir ${cache}/${tagged.replace(/-\d+$/, "")}-1001`,
            "remove the cache": `rm -rf ${Path.dirname(cache)}`
          }
          for (const [attack, command] of Object.entries(attacks)) {
            // In a subshell: the shell's own message, of a redirection it could not make, goes to the output too.
            const result = yield* sh(`( ${command} ) 2>&1; echo "exit $?"`)
            assert.notMatch(result.stdout, /exit 0\n?$/, `${attack}: ${result.stdout}`)
            assert.match(result.stdout, /Read-only file system|Permission denied/, attack)
          }
          // The engines, the cache with them, are a read-only mount in the agent's sandbox (fields: mount point, options).
          const mounts = (yield* sh("cat /proc/self/mountinfo")).stdout.split("\n").map((line) => line.split(" "))
          const engines = mounts.filter((fields) => fields[4] === Fs.realpathSync(enginesDir))
          assert.isAbove(engines.length, 0)
          for (const fields of engines) assert.match(fields[5]!, /^ro\b/)
          assert.strictEqual(digest(cache), before, "the cache is as Cairn made it")
          // It reads it all the same.
          assert.strictEqual((yield* sh(`ls ${cache}/${tagged} | wc -l`)).stdout.trim(), String(Fs.readdirSync(Path.join(cache, tagged)).length))
        }))

      it.effect("a cache that does not match, or none, only means Node compiles as it would without one", () =>
        Effect.gen(function*() {
          yield* running
          // The agent's own copy, every entry garbage: Node rejects each entry and runs the engine all the same.
          const garbage = yield* sh(
            `cp -r ${cache} $HOME/stale && chmod -R u+w $HOME/stale && ${process.execPath} -e '` +
              `const fs = require("fs"), path = require("path"), dir = process.argv[1];` +
              `for (const sub of fs.readdirSync(dir)) { const d = path.join(dir, sub); if (fs.lstatSync(d).isSymbolicLink()) continue;` +
              ` for (const f of fs.readdirSync(d)) { const p = path.join(d, f); fs.writeFileSync(p, require("crypto").randomBytes(fs.statSync(p).size)) } }' $HOME/stale && ` +
              `NODE_DEBUG_NATIVE=COMPILE_CACHE NODE_COMPILE_CACHE=$HOME/stale OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED=1 ${process.execPath} ${entryFile} --version 2>&1`
          )
          assert.strictEqual(garbage.exitCode, 0, garbage.stdout)
          assert.include(garbage.stdout, version)
          assert.notMatch(garbage.stdout, /was accepted/)
          // None at all, where nothing can be made: as without a cache.
          const none = yield* sh(`NODE_COMPILE_CACHE=/nonexistent/cache OPENCLAW_PACKAGED_COMPILE_CACHE_RESPAWNED=1 ${process.execPath} ${entryFile} --version 2>&1`)
          assert.strictEqual(none.exitCode, 0, none.stdout)
          assert.include(none.stdout, version)
          assert.deepStrictEqual(CompileCache.environment(Path.join(dataDir, "no-such-cache")), {})
        }))
    })
  })

  describe("the compile cache under SANDBOX=off", () => {
    const unsandboxed = OpenClawAgentEngine.layer({
      dataDir: Path.join(dataDir, "off"),
      enginesDir,
      versions: [version],
      basePort: unsandboxedPort,
      startTimeout: "120 seconds",
      stopGrace: "15 seconds",
      sandbox: "off",
      compileCache: true
    })
    layer(Layer.fresh(unsandboxed), { excludeTestServices: true, timeout: "400 seconds" })((it) => {
      it.effect("is read by a gateway running as Cairn's user, which (but as root) cannot write it", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const cache = CompileCache.cacheDir(installDir, process.execPath)
          const before = digest(cache)
          const id = `${agentId}-off`
          yield* engine.provision(id, { version, gatewayToken: Redacted.make(`token-off-${Date.now().toString(36)}`) })
          if ((yield* engine.status(id)).state !== "running") yield* engine.start(id)
          assert.strictEqual((yield* engine.status(id)).state, "running")
          assert.strictEqual(gatewayEnvironment(Path.join(dataDir, "off", "agents", id))?.["NODE_COMPILE_CACHE"], cache)
          yield* engine.stop(id)
          // Stopped, the gateway has written what it was going to: nothing, where the cache is read only to it.
          if (process.getuid?.() !== 0) assert.strictEqual(digest(cache), before)
        }))
    })
  })
}
