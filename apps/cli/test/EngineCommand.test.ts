/**
 * `cairn engine install [version]`, with no server: offline, against an engines directory that already holds a
 * version (npm is told to stay offline, so no test run reaches the registry). EngineInstall.int.test.ts installs a
 * real version.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { embeddedStorePass } from "@cairn/server-node/testing"
import { serverlessCli } from "./ServerlessCli.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-cli-engine-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const cli = serverlessCli(root)

/** An engines directory holding `version` as an install leaves it: the engine and its channel plugins. */
const installedEngines = (version: string) => {
  const dir = Path.join(root, `engines-${version}`)
  const engine = Path.join(dir, version, "node_modules", "openclaw")
  Fs.mkdirSync(engine, { recursive: true })
  Fs.writeFileSync(Path.join(engine, "openclaw.mjs"), "")
  for (const channel of ["slack", "discord", "whatsapp"]) {
    const plugin = Path.join(dir, version, "channel-plugins", "node_modules", "@openclaw", channel)
    Fs.mkdirSync(plugin, { recursive: true })
    Fs.writeFileSync(Path.join(plugin, "package.json"), "{}")
  }
  return dir
}

/** npm may not reach the registry: what it lists falls back to the versions installed here. */
const offline = (enginesDir: string) => ({
  OPENCLAW_ENGINES_DIR: enginesDir,
  npm_config_offline: "true",
  npm_config_cache: Path.join(root, "npm-cache")
})

describe.runIf(embeddedStorePass)("cairn engine install", () => {
  it("says a version already installed is installed, without a server and without downloading", () => {
    const enginesDir = installedEngines("2026.9.1")
    const named = cli(offline(enginesDir), "engine", "install", "2026.9.1")
    assert.strictEqual(named.code, 0, named.stderr)
    assert.include(named.stdout, `OpenClaw 2026.9.1 is already installed in ${Path.join(enginesDir, "2026.9.1")}`)
    assert.notInclude(named.stdout, "Installing")
    // Without a version: the one the server would use, here the newest one it can offer.
    const unnamed = cli(offline(enginesDir), "engine", "install")
    assert.strictEqual(unnamed.code, 0, unnamed.stderr)
    assert.include(unnamed.stdout, "OpenClaw 2026.9.1 is already installed")
  })

  it("refuses a version that is not offered, with exit code 1", () => {
    const refused = cli(offline(installedEngines("2026.9.2")), "engine", "install", "1999.1.1")
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "cairn: OpenClaw 1999.1.1 is not offered")
    assert.notInclude(refused.stderr, "    at ")
  })
})
