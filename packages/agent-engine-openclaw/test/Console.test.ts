/**
 * Console commands on the real adapter (src/Console.ts), beyond the shared contract: what ends a command and
 * everything it started (timeouts, its own exit, interruption, the agent's destroy), exit codes of signals, output
 * caps on large and multi-byte output, working directories through symlinks, the environment (what it costs against
 * a raw spawn in the same sandbox is `npm run bench:workspace`'s). On the stand-in engine: a command needs no gateway. Skipped,
 * with the reason, only where bubblewrap cannot run (CI installs it).
 */
import { AgentEngine, type ExecRequest } from "@cairn/agent-engine"
import { freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { OpenClawAgentEngine } from "../src/index.ts"
import { bwrapRuns, onGatewayPorts, sandboxSkipReason, waitUntil } from "../src/testing/index.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-console-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
const dataDir = Path.join(root, "data")
const fakeNpm = Path.join(import.meta.dirname, "fixtures", "fake-npm.mjs")
// Cairn's own configuration, which no agent may see.
process.env["SECRETS_MASTER_KEY"] = "cairn-master-key-never-for-agents"

const provisioned = Effect.gen(function*() {
  const agentId = freshAgent("console")
  yield* (yield* AgentEngine).provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make(`token-${agentId}`) })
  return agentId
})

const exec = (agentId: string, command: string, options: Partial<ExecRequest> = {}) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    return yield* engine.exec(agentId, { command, timeoutMs: 20_000, maxOutputBytes: 1024 * 1024, ...options })
  })

const workspaceOf = (agentId: string) => Path.join(dataDir, "agents", agentId, ".openclaw", "workspace")

/** The pids of the host's processes whose command line holds `marker`. */
const processesWith = (marker: string) =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)
    } catch {
      return false
    }
  })


/** A `sleep` whose command line no other process has. */
let markers = 0
const uniqueSleep = (seconds: number) => `${seconds}.${process.pid}${(markers++).toString().padStart(3, "0")}`

if (bwrapRuns) {
  describe("Console commands", () => {
    layer(Layer.fresh(onGatewayPorts(4, (basePort) => OpenClawAgentEngine.layer({ dataDir, npmPath: fakeNpm, basePort }))), {
      excludeTestServices: true,
      timeout: "60 seconds"
    })((it) => {
      it.effect("reports the exit code of a command a signal ended as 128 + the signal", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          assert.strictEqual((yield* exec(agentId, "kill -KILL $$")).exitCode, 137)
          assert.strictEqual((yield* exec(agentId, "kill -TERM $$")).exitCode, 143)
          assert.strictEqual((yield* exec(agentId, "exit 255")).exitCode, 255)
        }))

      it.effect("kills the command and all it started at the timeout", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const [first, second] = [uniqueSleep(100), uniqueSleep(100)]
          const result = yield* exec(agentId, `sleep ${first} & sleep ${second}`, { timeoutMs: 700 })
          assert.deepInclude(result, { exitCode: 137, timedOut: true })
          assert.isBelow(result.durationMs, 5_000)
          yield* waitUntil(() => processesWith(first).length === 0 && processesWith(second).length === 0, "both sleeps are gone", 30_000)
        }))

      it.effect("ends what a command left running when it exits, even what left its process group", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const [background, detached] = [uniqueSleep(100), uniqueSleep(100)]
          const result = yield* exec(agentId, `sleep ${background} & setsid sleep ${detached} & echo left`)
          assert.deepInclude(result, { stdout: "left\n", exitCode: 0, timedOut: false })
          assert.isBelow(result.durationMs, 5_000)
          yield* waitUntil(() => processesWith(background).length === 0 && processesWith(detached).length === 0, "nothing is left", 30_000)
        }))

      it.effect("kills a command whose caller gives up, and the commands of an agent being destroyed", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          const interrupted = uniqueSleep(100)
          const fiber = yield* Effect.forkChild(exec(agentId, `sleep ${interrupted}`))
          yield* waitUntil(() => processesWith(interrupted).length > 0, "the command runs")
          yield* Fiber.interrupt(fiber)
          yield* waitUntil(() => processesWith(interrupted).length === 0, "the interrupted command is gone", 30_000)

          const destroyed = uniqueSleep(100)
          const running = yield* Effect.forkChild(exec(agentId, `sleep ${destroyed}`))
          yield* waitUntil(() => processesWith(destroyed).length > 0, "the command runs")
          const startedAt = Date.now()
          yield* engine.destroy(agentId)
          assert.isBelow(Date.now() - startedAt, 5_000)
          yield* waitUntil(() => processesWith(destroyed).length === 0, "the command is gone with its agent", 30_000)
          assert.deepInclude(yield* Fiber.join(running), { exitCode: 137 })
          assert.isFalse(Fs.existsSync(Path.join(dataDir, "agents", agentId)))
        }))

      it.effect("keeps no more than the cap of a large output, and cuts no character in two", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const large = yield* exec(agentId, "head -c 300000000 /dev/zero; head -c 5000 /dev/zero >&2", { maxOutputBytes: 4096 })
          assert.deepInclude(large, { exitCode: 0, truncated: true })
          assert.strictEqual(large.stdout.length, 4096)
          assert.strictEqual(large.stderr.length, 4096)
          // é is two bytes: a cap of three keeps one, not one and a half.
          const text = yield* exec(agentId, "printf '\\303\\251\\303\\251'", { maxOutputBytes: 3 })
          assert.deepInclude(text, { stdout: "é", truncated: true })
          const whole = yield* exec(agentId, "printf '\\303\\251\\303\\251'", { maxOutputBytes: 4 })
          assert.deepInclude(whole, { stdout: "éé", truncated: false })
        }))

      it.effect("resolves the working directory with its symlinks: inside the workspace it runs, outside it is refused", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          yield* engine.writeWorkspaceFiles(agentId, [{ path: "real/inner/file.txt", content: new TextEncoder().encode("inside") }])
          const workspace = workspaceOf(agentId)
          const outside = Path.join(root, `outside-${agentId}`)
          Fs.mkdirSync(outside)
          Fs.symlinkSync(Path.join(workspace, "real"), Path.join(workspace, "link-in"))
          Fs.symlinkSync(outside, Path.join(workspace, "link-out"))
          Fs.symlinkSync(Path.dirname(workspace), Path.join(workspace, "link-up"))
          Fs.symlinkSync("/etc", Path.join(workspace, "link-etc"))

          assert.deepInclude(yield* exec(agentId, "pwd; cat inner/file.txt", { cwd: "link-in" }), {
            stdout: `${workspace}/real\ninside`,
            exitCode: 0
          })
          assert.deepInclude(yield* exec(agentId, "cat file.txt", { cwd: `${workspace}/link-in/inner` }), { stdout: "inside" })
          for (const cwd of ["link-out", "link-up", "link-etc", "link-in/../..", "real/inner/file.txt", "missing", `${outside}`, "real/\0"]) {
            const error = yield* Effect.flip(exec(agentId, "pwd", { cwd }))
            assert.deepInclude(error, { _tag: "WorkingDirectoryOutside", agentId, cwd }, `cwd ${cwd}`)
          }
        }))

      it.effect("gives a command the agent's environment and home, and none of Cairn's own", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          yield* engine.setEnvironment(agentId, { ANTHROPIC_API_KEY: Redacted.make("sk-ant-for-this-agent") })
          const result = yield* exec(agentId, "printenv ANTHROPIC_API_KEY HOME TMPDIR; printenv SECRETS_MASTER_KEY || echo unset")
          assert.strictEqual(result.stdout, `sk-ant-for-this-agent\n${Path.join(dataDir, "agents", agentId)}\n/tmp\nunset\n`)
        }))

      it.effect("fails with ExecFailed, not a result, when the command cannot be started at all", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          // No process can take a NUL byte in an argument.
          const error = yield* Effect.flip(exec(agentId, "echo a\0b"))
          assert.strictEqual(error._tag, "ExecFailed")
          assert.deepInclude(yield* exec(agentId, "echo still fine"), { stdout: "still fine\n", exitCode: 0 })
        }))

      it.effect("runs an agent's commands side by side", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          const startedAt = Date.now()
          const results = yield* Effect.all([1, 2, 3].map((n) => exec(agentId, `sleep 1; echo ${n}`)), { concurrency: "unbounded" })
          assert.deepStrictEqual(results.map((result) => result.stdout), ["1\n", "2\n", "3\n"])
          assert.isBelow(Date.now() - startedAt, 2_900)
        }))
    })
  })
} else {
  describe.skip(`Console commands (${sandboxSkipReason})`, () => {
    it.skip("needs bubblewrap", () => {})
  })
}
