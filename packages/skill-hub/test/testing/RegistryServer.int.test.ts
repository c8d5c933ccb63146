/**
 * OpenClaw's own installer against the RegistryServer. It runs with OPENCLAW_BIN set to an installed `openclaw.mjs`,
 * or under ENGINE_IT=openclaw (without DATABASE_URL) with the newest engine already installed in OPENCLAW_ENGINES_DIR
 * (CI's cache); each CLI run takes about ten seconds.
 */
import { RegistryServer, writeCatalog } from "@cairn/skill-hub/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import * as fs from "node:fs/promises"
import { homedir } from "node:os"
import { join } from "node:path"
import semver from "semver"
import { tempDir } from "../Fixtures.ts"

const installedEngine = () => {
  const engines = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
  const bin = (version: string) => join(engines, version, "node_modules", "openclaw", "openclaw.mjs")
  const versions = existsSync(engines) ? readdirSync(engines).filter((v) => semver.valid(v) && existsSync(bin(v))) : []
  return versions.length === 0 ? "" : bin(semver.rsort(versions)[0]!)
}

// Nothing here touches a database, so CI's second pass (on Postgres) need not pay for it again.
const openclaw = process.env["OPENCLAW_BIN"] ??
  (process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined ? installedEngine() : "")

const skillMd = (version: string) => `---\nname: hello-hub\ndescription: Says hello (${version})\n---\n# Hello ${version}\n`

/** Runs the OpenClaw CLI in its own home, offline but for the registry. */
const run = (home: string, registry: string, args: ReadonlyArray<string>) =>
  Effect.callback<string>((resume) => {
    execFile(process.execPath, [openclaw, ...args], {
      env: {
        PATH: process.env["PATH"],
        HOME: home,
        OPENCLAW_HOME: home,
        OPENCLAW_CLAWHUB_URL: registry,
        OPENCLAW_NO_AUTO_UPDATE: "1",
        OPENCLAW_OFFLINE: "1",
        OPENCLAW_DISABLE_BONJOUR: "1",
        DO_NOT_TRACK: "1",
        CLAWHUB_DISABLE_TELEMETRY: "1"
      },
      timeout: 90_000
    }, (error, stdout, stderr) => {
      resume(error === null ? Effect.succeed(stdout) : Effect.die(new Error(`${error.message}\n${stdout}\n${stderr}`)))
    })
  })

describe.runIf(openclaw !== "")(`openclaw skills against the RegistryServer (${openclaw || "skipped: OPENCLAW_BIN is not set"})`, () => {
  it.live("installs a pinned version, updates to the newest, and finds the skill by search", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeCatalog(join(dir, "catalog"), {
        "hello-hub": {
          hub: { displayName: "Hello Hub", installs: 3 },
          versions: {
            "1.0.0": { files: { "SKILL.md": skillMd("1.0.0"), "scripts/hi.sh": "echo hi\n" } },
            "1.1.0": { files: { "SKILL.md": skillMd("1.1.0"), "scripts/hi.sh": "echo hello\n" } }
          }
        }
      })
      const { url } = yield* RegistryServer.serve({ dir: join(dir, "catalog") })
      const home = join(dir, "home")
      const installed = join(home, ".openclaw", "workspace", "skills", "hello-hub", "SKILL.md")

      const install = yield* run(home, url, ["skills", "install", "hello-hub", "--version", "1.0.0"])
      assert.include(install, "Installed hello-hub@1.0.0")
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(installed, "utf8")), skillMd("1.0.0"))

      const update = yield* run(home, url, ["skills", "update", "hello-hub"])
      assert.include(update, "Updated hello-hub: 1.0.0 -> 1.1.0")
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(installed, "utf8")), skillMd("1.1.0"))

      assert.include(yield* run(home, url, ["skills", "search", "hello"]), "@local/hello-hub")
    }), 240_000)
})
