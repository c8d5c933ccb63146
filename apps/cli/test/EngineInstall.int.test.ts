/**
 * `cairn engine install` for real, with ENGINE_IT=openclaw: OpenClaw from the npm registry into a temporary engines
 * directory (about 650 MB), with its progress lines, and a second install that finds it there. In the
 * `real-gateways` project: an install beside other files' servers and gateways strained the disk long enough for its
 * clean-up to outlast the hook's two minutes.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { embeddedStorePass } from "@cairn/server-node/testing"
import { serverlessCli } from "./ServerlessCli.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-cli-engine-install-"))
afterAll(() => Fs.promises.rm(root, { recursive: true, force: true }), 10 * 60_000)

const cli = serverlessCli(root)

describe.runIf(process.env["ENGINE_IT"] === "openclaw" && embeddedStorePass)("cairn engine install, from the npm registry", () => {
  it("installs a real version, printing its progress, and then says it is installed", () => {
    const env = { OPENCLAW_ENGINES_DIR: Path.join(root, "engines"), OPENCLAW_VERSIONS: "2026.9.6" }
    const installed = cli(env, "engine", "install")
    assert.strictEqual(installed.code, 0, installed.stderr)
    assert.include(installed.stdout, "Installing OpenClaw 2026.9.6 from the npm registry")
    assert.match(installed.stdout, /Installed OpenClaw 2026\.9\.6: \d+ MB in \d+ s/)
    assert.include(installed.stdout, `OpenClaw 2026.9.6 is installed in ${Path.join(env.OPENCLAW_ENGINES_DIR, "2026.9.6")}`)
    assert.isTrue(Fs.existsSync(Path.join(env.OPENCLAW_ENGINES_DIR, "2026.9.6", "node_modules", "openclaw", "openclaw.mjs")))
    const again = cli(env, "engine", "install", "2026.9.6")
    assert.include(again.stdout, "OpenClaw 2026.9.6 is already installed")
  }, 15 * 60_000)
})
