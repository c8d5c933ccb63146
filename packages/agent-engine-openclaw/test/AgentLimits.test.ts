/**
 * The hostile tenant against the per-agent cgroups (decision 0042, AgentCgroups.ts), on the stand-in engine with
 * real sandboxes: what one agent's processes use together is capped, across its sandboxes, and another agent is not
 * hurt by it. Each case checks that the attack really happened (the allocation reached the cap, the bomb filled its
 * cgroup, the loop burned CPU) before it checks what held. Runs where bubblewrap runs and Cairn can make cgroups.
 */
import { AgentEngine, type ExecRequest } from "@cairn/agent-engine"
import { freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as AgentCgroups from "../src/AgentCgroups.ts"
import { metaDirOf } from "../src/AgentHome.ts"
import { pidFile } from "../src/GatewayProcess.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { bwrapRuns, onGatewayPorts } from "../src/testing/index.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-agent-limits-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const fakeNpm = Path.join(import.meta.dirname, "fixtures", "fake-npm.mjs")
const repository = Path.resolve(import.meta.dirname, "..", "..", "..")
const MiB = 1024 ** 2
const limits = { memoryBytes: 128 * MiB, cpus: 0.5, pids: 48 }

/** Cgroups as this test process sees them (the engine in it makes the same ones). */
const probe = AgentCgroups.make(limits)
const cgroupsAvailable = typeof probe !== "string" && ["memory", "cpu", "pids"].every((c) => probe.enforced.includes(c as AgentCgroups.Controller))

/** The agent's cgroup folder in a v1 hierarchy, as Cairn (this process) made it. */
const cgroupDir = (controller: string, agentId: string) => {
  const own = Fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").find((line) => line.split(":")[1]?.split(",").includes(controller))
  return Path.join(`/sys/fs/cgroup/${controller}`, own!.split(":")[2]!, `cairn-agents-${process.pid}`, agentId)
}
const readNumber = (file: string) => Number(Fs.readFileSync(file, "utf8").trim())

// A slot for each agent the cases make (an agent keeps its slot until destroyed), so gateways stay in the reserved range.
const engineLayer = onGatewayPorts(12, (basePort) =>
  OpenClawAgentEngine.layer({
    dataDir: root,
    npmPath: fakeNpm,
    // The stand-in engine's gateway imports its sources from the repository.
    sandboxReadOnly: [repository],
    basePort,
    startTimeout: "10 seconds",
    stopGrace: "2 seconds",
    agentLimits: limits
  }))

const provisionedWith = (token?: string) =>
  Effect.gen(function*() {
    const agentId = freshAgent("limited")
    yield* (yield* AgentEngine).provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make(token ?? `token-${agentId}`) })
    return agentId
  })
const provisioned = provisionedWith()

const exec = (agentId: string, command: string, options: Partial<ExecRequest> = {}) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    return yield* engine.exec(agentId, { command, timeoutMs: 30_000, maxOutputBytes: 1024 * 1024, ...options })
  })

const v1 = Fs.existsSync("/sys/fs/cgroup/memory/cgroup.procs")

if (bwrapRuns && process.getuid?.() === 0 && cgroupsAvailable && v1) {
  describe("a hostile tenant against its agent's cgroup", () => {
    layer(Layer.fresh(engineLayer), { excludeTestServices: true, timeout: "90 seconds" })((it) => {
      it.effect("an allocation past the agent's memory cap is killed, and another agent's command runs on", () =>
        Effect.gen(function*() {
          const hog = yield* provisioned
          const neighbour = yield* provisioned
          // The neighbour's long command, running while the hog allocates.
          const neighbourRun = yield* Effect.forkChild(exec(neighbour, "sleep 3; echo still here"))
          // Touches 1 MiB at a time, in one process (its own RLIMIT_DATA of 8 GiB is far off): the cgroup must stop it.
          const result = yield* exec(hog, "perl -e '$s = \"\"; while (1) { $s .= \"x\" x 1048576 }'; echo \"exit $?\"")
          // SIGKILL from the OOM killer: 128 + 9.
          assert.strictEqual(result.stdout.trim(), "exit 137", result.stderr)
          const memory = cgroupDir("memory", hog)
          // It really allocated up to the cap, and the kernel's OOM killer ended it there.
          assert.isAtLeast(readNumber(Path.join(memory, "memory.max_usage_in_bytes")), limits.memoryBytes - 4 * MiB)
          assert.isAtMost(readNumber(Path.join(memory, "memory.max_usage_in_bytes")), limits.memoryBytes)
          assert.isAtLeast(probeUsage(hog)?.oomKills ?? 0, 1)
          if (process.env["TEST_LOGS"] === "print") {
            console.log(`memory: peak ${readNumber(Path.join(memory, "memory.max_usage_in_bytes"))} of ${limits.memoryBytes}, ` +
              `${probeUsage(hog)?.oomKills} OOM kill(s), ${result.durationMs} ms`)
          }
          const neighbourResult = yield* Fiber.join(neighbourRun)
          assert.strictEqual(neighbourResult.stdout.trim(), "still here")
          assert.strictEqual(neighbourResult.exitCode, 0)
          // Only the hog's cgroup saw an OOM kill.
          assert.strictEqual(probeUsage(neighbour)?.oomKills ?? 0, 0)
          // The hog's agent still works within its cap.
          assert.strictEqual((yield* exec(hog, "echo alive")).stdout.trim(), "alive")
        }))

      it.effect("a fork bomb stops at the agent's process cap across two of its console commands", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          // The first command holds 30 sleeping processes; the second then tries to start 40 more.
          const holder = yield* Effect.forkChild(exec(agentId, "for i in $(seq 30); do sleep 8 & done; wait; echo held"))
          const pids = cgroupDir("pids", agentId)
          yield* Effect.promise(async () => {
            const deadline = Date.now() + 15_000
            // The cgroup is made when the holder's sandbox starts.
            const current = () => Fs.existsSync(pids) ? readNumber(Path.join(pids, "pids.current")) : 0
            while (current() < 30 && Date.now() < deadline) {
              await new Promise((resolve) => setTimeout(resolve, 50))
            }
          })
          assert.isAtLeast(readNumber(Path.join(pids, "pids.current")), 30)
          const second = yield* exec(
            agentId,
            "perl -e 'my $n = 0; for (1 .. 40) { my $pid = fork(); last unless defined $pid; " +
              "if ($pid == 0) { sleep 8; exit 0 } $n++ } print \"started $n\\n\"'"
          )
          const started = Number(/started (\d+)/.exec(second.stdout)?.[1] ?? "-1")
          // Per agent, not per sandbox: the second sandbox alone (its bwrap, shell and 40 sleeps) is far below 48.
          assert.isAtLeast(started, 0, `${second.stdout} ${second.stderr}`)
          assert.isBelow(started, 40, second.stdout)
          if (process.env["TEST_LOGS"] === "print") console.log(`pids: the second command started ${started} of 40 (cap ${limits.pids})`)
          // The cgroup refused forks at its cap, and never held more.
          assert.strictEqual(readNumber(Path.join(pids, "pids.max")), limits.pids)
          const events = Fs.readFileSync(Path.join(pids, "pids.events"), "utf8")
          assert.isAbove(Number(/max (\d+)/.exec(events)?.[1]), 0, events)
          yield* Fiber.join(holder)
        }))

      it.effect("a busy loop is throttled to the agent's CPU quota while another agent's console answers", () =>
        Effect.gen(function*() {
          const spinner = yield* provisioned
          const neighbour = yield* provisioned
          // Two busy loops: without the cap they would take both cores.
          const spinning = yield* Effect.forkChild(
            exec(spinner, "timeout 6 sh -c 'while :; do :; done' & timeout 6 sh -c 'while :; do :; done' & wait")
          )
          yield* Effect.sleep("1500 millis")
          const before = probeUsage(spinner)?.cpuNanos ?? 0
          const startedAt = process.hrtime.bigint()
          yield* Effect.sleep("1 second")
          const used = (probeUsage(spinner)?.cpuNanos ?? 0) - before
          const elapsed = Number(process.hrtime.bigint() - startedAt)
          const answered = Date.now()
          const reply = yield* exec(neighbour, "echo here")
          const answerMs = Date.now() - answered
          if (process.env["TEST_LOGS"] === "print") {
            console.log(`cpu: ${(used / 1e6).toFixed(0)} ms of CPU in ${(elapsed / 1e6).toFixed(0)} ms (quota ${limits.cpus}); ` +
              `the neighbour answered in ${answerMs} ms`)
          }
          // It really burned CPU, and no more than its quota (plus one CFS period of slack).
          assert.isAbove(used, 0.3 * elapsed * limits.cpus, `used ${used} ns in ${elapsed} ns`)
          assert.isAtMost(used, elapsed * limits.cpus + 100_000_000, `used ${used} ns in ${elapsed} ns`)
          assert.strictEqual(reply.stdout.trim(), "here")
          assert.isBelow(answerMs, 10_000)
          yield* Fiber.join(spinning)
        }))

      it.effect("a gateway the OOM killer ends at the agent's cap is reported crashed for `oom`; a plain crash is not", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          // The stand-in gateway with this token leaks 8 MiB every 20 ms from a second after it is ready.
          const leaker = yield* provisionedWith("grow-when-ready")
          yield* engine.start(leaker)
          const deadline = Date.now() + 30_000
          let status = yield* engine.status(leaker)
          while (status.state !== "crashed" && Date.now() < deadline) {
            yield* Effect.sleep("100 millis")
            status = yield* engine.status(leaker)
          }
          assert.strictEqual(status.state, "crashed")
          assert.strictEqual(status.reason, "oom")
          const memory = cgroupDir("memory", leaker)
          assert.isAtLeast(readNumber(Path.join(memory, "memory.max_usage_in_bytes")), limits.memoryBytes - 4 * MiB)
          assert.isAtLeast(probeUsage(leaker)?.oomKills ?? 0, 1)
          // Started again (it leaks again, and may be gone again by the time we look; while it runs, no reason).
          yield* Effect.ignore(engine.start(leaker))
          const restarted = yield* engine.status(leaker)
          if (restarted.state === "running") assert.isUndefined(restarted.reason)
          yield* engine.stop(leaker)

          // A gateway killed by hand (SIGKILL, no OOM) is a plain crash.
          const plain = yield* provisioned
          yield* engine.start(plain)
          const pid = (JSON.parse(Fs.readFileSync(pidFile(metaDirOf(Path.join(root, "agents", plain))), "utf8")) as { pid: number }).pid
          process.kill(-pid, "SIGKILL")
          const plainDeadline = Date.now() + 15_000
          let plainStatus = yield* engine.status(plain)
          while (plainStatus.state !== "crashed" && Date.now() < plainDeadline) {
            yield* Effect.sleep("100 millis")
            plainStatus = yield* engine.status(plain)
          }
          assert.strictEqual(plainStatus.state, "crashed")
          assert.isUndefined(plainStatus.reason)
        }))

      it.effect("a destroyed agent's cgroup is removed", () =>
        Effect.gen(function*() {
          const agentId = yield* provisioned
          assert.strictEqual((yield* exec(agentId, "echo made")).stdout.trim(), "made")
          assert.isTrue(Fs.existsSync(cgroupDir("memory", agentId)))
          yield* (yield* AgentEngine).destroy(agentId)
          yield* Effect.promise(async () => {
            const deadline = Date.now() + 10_000
            while (Fs.existsSync(cgroupDir("memory", agentId)) && Date.now() < deadline) {
              await new Promise((resolve) => setTimeout(resolve, 100))
            }
          })
          for (const controller of ["memory", "cpu", "cpuacct", "pids"]) {
            assert.isFalse(Fs.existsSync(cgroupDir(controller, agentId)), controller)
          }
        }))
    })
  })
} else {
  describe.skip(`per-agent cgroups (bubblewrap ${bwrapRuns ? "runs" : "cannot run"}; cgroups: ${
    typeof probe === "string" ? probe : probe.enforced.join(",")
  }; root: ${process.getuid?.() === 0}; v1: ${v1})`, () => {})
}

/** The counters of an agent's cgroup, read as the engine reads them (the probe shares this process's folders). */
function probeUsage(agentId: string) {
  if (typeof probe === "string") return undefined
  probe.join(agentId)
  return probe.usage(agentId)
}

describe("AGENT_MEMORY_MAX sizes", () => {
  it("reads bytes and sizes with a unit, and refuses anything else", () => {
    assert.strictEqual(AgentCgroups.parseBytes("4294967296"), 4 * 1024 ** 3)
    assert.strictEqual(AgentCgroups.parseBytes("2GiB"), 2 * 1024 ** 3)
    assert.strictEqual(AgentCgroups.parseBytes("512 MiB"), 512 * MiB)
    assert.strictEqual(AgentCgroups.parseBytes("1.5G"), 1.5 * 1024 ** 3)
    assert.strictEqual(AgentCgroups.parseBytes("800MB"), 800 * 1000 ** 2)
    for (const wrong of ["", "0", "-1GiB", "2 gigs", "GiB", "1e9"]) assert.isUndefined(AgentCgroups.parseBytes(wrong), wrong)
  })

  it("names an agent's cgroup after its id, and nothing a path could hold", () => {
    assert.strictEqual(AgentCgroups.nameOf("agent-1_a.b"), "agent-1_a.b")
    assert.strictEqual(AgentCgroups.nameOf("../x/y"), "__x_y")
    assert.strictEqual(AgentCgroups.nameOf(".."), "_")
  })
})
