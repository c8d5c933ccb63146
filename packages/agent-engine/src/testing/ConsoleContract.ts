/**
 * The AgentEngine contract for console operations (see ContractSection.ts): `exec` runs `sh -c` as the agent, in
 * its workspace or a directory inside it, with its environment, whether or not its gateway runs; any exit code is a
 * result, a timeout kills the command, output is capped. Commands keep to the vocabulary the simulated engine's
 * shell understands (echo, exit, pwd, cat, ls, printenv, sleep, head -c N /dev/zero, true, false; `;` and `&&`).
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Redacted } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import type { ExecRequest } from "../WorkspaceOperations.ts"
import type { SectionContext } from "./ContractSection.ts"

const encoder = new TextEncoder()
let counter = 0
/** A name no other case uses in the shared agent. */
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`

/**
 * Runs on the wall clock even in suites on the TestClock, where nothing would move time on: a timeout and a `sleep`
 * are real durations to a real engine, and the simulated one waits on the Clock it is given.
 */
const onWallClock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock) as Clock.Clock & {
      readonly withLive?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    }
    return clock.withLive === undefined ? effect : clock.withLive(effect)
  })

const request = (command: string, options: Partial<ExecRequest> = {}): ExecRequest => ({
  command,
  timeoutMs: 20_000,
  maxOutputBytes: 64 * 1024,
  ...options
})

export const consoleContract = <R>({ it, sharedAgent, aRunningAgent, freshAgent, timeout }: SectionContext<R>): void => {
  it.effect("runs a command as the agent: its stdout, stderr and exit code, whatever the code", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const result = yield* engine.exec(agentId, request("echo to out; echo to err >&2; echo more && exit 3"))
      assert.deepInclude(result, { stdout: "to out\nmore\n", stderr: "to err\n", exitCode: 3, truncated: false, timedOut: false })
      assert.isAtLeast(result.durationMs, 0)
      assert.deepInclude(yield* engine.exec(agentId, request("true")), { stdout: "", stderr: "", exitCode: 0 })
      assert.deepInclude(yield* engine.exec(agentId, request("false")), { exitCode: 1 })
      assert.deepInclude(yield* engine.exec(agentId, request("false && echo never")), { stdout: "", exitCode: 1 })
      const missing = yield* engine.exec(agentId, request("no-such-command-anywhere"))
      assert.strictEqual(missing.exitCode, 127)
      assert.include(missing.stderr, "no-such-command-anywhere: not found")
    }), timeout)

  it.effect("runs in the workspace: files written there are read by relative paths, and `cwd` moves inside it", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const folder = unique("console-contract")
      yield* engine.writeWorkspaceFiles(agentId, [
        { path: `${folder}/notes.md`, content: encoder.encode("written through the port\n") },
        { path: `${folder}/inner/b.txt`, content: encoder.encode("b") }
      ])
      assert.deepInclude(yield* engine.exec(agentId, request(`cat ${folder}/notes.md`)), {
        stdout: "written through the port\n",
        exitCode: 0
      })
      assert.deepInclude(yield* engine.exec(agentId, request(`ls ${folder}`)), { stdout: "inner\nnotes.md\n", exitCode: 0 })
      const workspace = (yield* engine.exec(agentId, request("pwd"))).stdout.trim()
      assert.isTrue(workspace.startsWith("/"), `pwd printed ${workspace}`)
      const inside = yield* engine.exec(agentId, request("pwd; cat b.txt", { cwd: `${folder}/inner` }))
      assert.deepInclude(inside, { stdout: `${workspace}/${folder}/inner\nb`, exitCode: 0 })
      // An absolute cwd inside the workspace, and one that leads back into it.
      assert.deepInclude(yield* engine.exec(agentId, request("ls", { cwd: `${workspace}/${folder}` })), { stdout: "inner\nnotes.md\n" })
      assert.deepInclude(yield* engine.exec(agentId, request("pwd", { cwd: `${folder}/inner/..` })), { stdout: `${workspace}/${folder}\n` })
    }), timeout)

  it.effect("refuses a cwd outside the workspace", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      for (const cwd of ["..", "../..", "/", "/etc"]) {
        const error = yield* Effect.flip(engine.exec(agentId, request("pwd", { cwd })))
        assert.deepInclude(error, { _tag: "WorkingDirectoryOutside", agentId, cwd }, `cwd ${cwd}`)
      }
    }), timeout)

  it.effect("gives a command the agent's environment, as set last", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const value = unique("console-secret")
      yield* engine.setEnvironment(agentId, { CONSOLE_CONTRACT_VALUE: Redacted.make(value) })
      assert.deepInclude(yield* engine.exec(agentId, request("printenv CONSOLE_CONTRACT_VALUE")), { stdout: `${value}\n`, exitCode: 0 })
      yield* engine.setEnvironment(agentId, {})
      assert.deepInclude(yield* engine.exec(agentId, request("printenv CONSOLE_CONTRACT_VALUE")), { stdout: "", exitCode: 1 })
    }), timeout)

  it.effect("kills a command at its timeout: timedOut, exit code 137", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const result = yield* onWallClock(engine.exec(agentId, request("echo started; sleep 10; echo never", { timeoutMs: 500 })))
      assert.deepInclude(result, { stdout: "started\n", exitCode: 137, timedOut: true })
      assert.isAtLeast(result.durationMs, 400)
      assert.isBelow(result.durationMs, 9_000)
      const quick = yield* onWallClock(engine.exec(agentId, request("sleep 0.1; echo done", { timeoutMs: 5_000 })))
      assert.deepInclude(quick, { stdout: "done\n", exitCode: 0, timedOut: false })
      assert.isAtLeast(quick.durationMs, 90)
    }), timeout)

  it.effect("keeps each output stream up to its cap, and says it cut it", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* sharedAgent
      const cut = yield* engine.exec(agentId, request("head -c 5000 /dev/zero; echo tail >&2", { maxOutputBytes: 1000 }))
      assert.deepInclude(cut, { stdout: "\0".repeat(1000), stderr: "tail\n", exitCode: 0, truncated: true })
      const exact = yield* engine.exec(agentId, request("head -c 1000 /dev/zero", { maxOutputBytes: 1000 }))
      assert.deepInclude(exact, { stdout: "\0".repeat(1000), truncated: false })
    }), timeout)

  it.effect("runs commands with the gateway stopped and while it runs", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const stopped = yield* freshAgent
      assert.strictEqual((yield* engine.status(stopped)).state, "stopped")
      assert.deepInclude(yield* engine.exec(stopped, request("echo stopped")), { stdout: "stopped\n", exitCode: 0 })
      const running = yield* aRunningAgent
      assert.deepInclude(yield* engine.exec(running, request("echo running")), { stdout: "running\n", exitCode: 0 })
      assert.strictEqual((yield* engine.status(running)).state, "running")
    }), timeout)

  it.effect("knows no agent that was never provisioned", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = unique("never-provisioned")
      assert.deepInclude(yield* Effect.flip(engine.exec(agentId, request("true"))), { _tag: "AgentNotProvisioned", agentId })
    }), timeout)
}
