/**
 * `cairn engine install` for real, with ENGINE_IT=openclaw: OpenClaw from the npm registry into a temporary engines
 * directory (about 650 MB), with its progress lines, and a second install that finds it there. In the
 * `real-gateways` project: an install beside other files' servers and gateways strained the disk long enough for its
 * clean-up to outlast the hook's two minutes.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-cli-engine-install-"))
afterAll(() => Fs.promises.rm(root, { recursive: true, force: true }), 10 * 60_000)

/** Runs the CLI as an operator would, with no server anywhere (CAIRN_URL points nowhere). */
const cli = async (env: Record<string, string>, ...args: Array<string>) => {
  const { DATABASE_URL: _, ...inherited } = process.env
  const { stdout } = await promisify(execFile)(process.execPath, [main, ...args], {
    env: { ...inherited, CAIRN_URL: "http://127.0.0.1:9", DATA_DIR: Path.join(root, "data"), ...env },
    encoding: "utf8",
    timeout: 15 * 60_000,
    maxBuffer: 16 * 1024 * 1024
  })
  return stdout
}

describe.runIf(process.env["ENGINE_IT"] === "openclaw")("cairn engine install, from the npm registry", () => {
  it("installs a real version, printing its progress, and then says it is installed", async () => {
    const env = { OPENCLAW_ENGINES_DIR: Path.join(root, "engines"), OPENCLAW_VERSIONS: "2026.9.6" }
    const installed = await cli(env, "engine", "install")
    assert.include(installed, "Installing OpenClaw 2026.9.6 from the npm registry")
    assert.match(installed, /Installed OpenClaw 2026\.9\.6: \d+ MB in \d+ s/)
    assert.include(installed, `OpenClaw 2026.9.6 is installed in ${Path.join(env.OPENCLAW_ENGINES_DIR, "2026.9.6")}`)
    assert.isTrue(Fs.existsSync(Path.join(env.OPENCLAW_ENGINES_DIR, "2026.9.6", "node_modules", "openclaw", "openclaw.mjs")))
    const again = await cli(env, "engine", "install", "2026.9.6")
    assert.include(again, "OpenClaw 2026.9.6 is already installed")
  }, 15 * 60_000)
})
