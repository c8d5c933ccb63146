/**
 * The hostile tenant against its disk (decision 0044, AgentDisks.ts): what one agent stores is capped by a filesystem
 * of its own, whatever it writes with, and another agent and the host's disk keep their room. On the stand-in engine
 * with real sandboxes; each case checks the attack really wrote up to the cap before it checks what held. Runs as
 * root where bubblewrap runs and loop devices can be mounted.
 */
import { AgentEngine, type ExecRequest } from "@cairn/agent-engine"
import { freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as AgentDisks from "../src/AgentDisks.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { bwrapRuns, onGatewayPorts, removeDataDir } from "../src/testing/index.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-agent-disks-"))
afterAll(() => removeDataDir(root))

const fakeNpm = Path.join(import.meta.dirname, "fixtures", "fake-npm.mjs")
const repository = Path.resolve(import.meta.dirname, "..", "..", "..")
const MiB = 1024 ** 2
const diskBytes = 64 * MiB

const mountPoints = () =>
  Fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => line.split(" ")[4]).filter((point) => point !== undefined)
const mountedUnder = (dir: string) => mountPoints().filter((point) => point === dir || point.startsWith(`${dir}/`))

// Probed as the engine will: as root, with the tools, making and mounting one.
const probeDir = Fs.mkdtempSync(Path.join(root, "probe-"))
const probe = await AgentDisks.make(probeDir, diskBytes)
const disksAvailable = typeof probe !== "string"

if (process.getuid?.() === 0 && disksAvailable) {
  describe("an agent's own filesystem", () => {
    it("is made at the first attach with what the home held (links kept as links), mounted again after a detach, and removed", async () => {
      const dir = Fs.mkdtempSync(Path.join(root, "unit-"))
      const disks = await AgentDisks.make(dir, diskBytes)
      assert(typeof disks !== "string", String(disks))
      const home = Path.join(dir, "agents", "older")
      Fs.mkdirSync(Path.join(home, ".openclaw"), { recursive: true })
      Fs.writeFileSync(Path.join(home, ".openclaw", "openclaw.json"), "{}")
      Fs.symlinkSync("/etc/hostname", Path.join(home, "link"))
      await disks.attach(home)
      assert.include(mountPoints(), home)
      assert.strictEqual(Fs.readFileSync(Path.join(home, ".openclaw", "openclaw.json"), "utf8"), "{}")
      assert.strictEqual(Fs.readlinkSync(Path.join(home, "link")), "/etc/hostname")
      assert.isFalse(Fs.existsSync(Path.join(home, "lost+found")))
      // Its size is the cap, whatever the host's disk holds.
      const stats = Fs.statfsSync(home)
      assert.isAtMost(stats.blocks * stats.bsize, diskBytes)
      assert.isAbove(stats.blocks * stats.bsize, diskBytes / 2)
      await disks.attach(home) // idempotent
      assert.strictEqual(mountPoints().filter((point) => point === home).length, 1)

      await disks.detach(home)
      assert.notInclude(mountPoints(), home)
      // What stays beneath the mount point is nothing: it was all moved in.
      assert.deepStrictEqual(Fs.readdirSync(home), [])
      await disks.attach(home)
      assert.strictEqual(Fs.readFileSync(Path.join(home, ".openclaw", "openclaw.json"), "utf8"), "{}")
      assert.isDefined(disks.usedBytes(home))

      await disks.remove(home)
      assert.notInclude(mountPoints(), home)
      assert.deepStrictEqual(Fs.readdirSync(Path.join(dir, "agents-disks")), [])
    })
  })
}

const engineLayer = onGatewayPorts(6, (basePort) =>
  OpenClawAgentEngine.layer({
    dataDir: Path.join(root, "engine"),
    npmPath: fakeNpm,
    sandboxReadOnly: [repository],
    basePort,
    startTimeout: "10 seconds",
    stopGrace: "2 seconds",
    agentDiskBytes: diskBytes
  }))

const provisioned = Effect.gen(function*() {
  const agentId = freshAgent("disk")
  yield* (yield* AgentEngine).provision(agentId, { version: "2026.10.2", gatewayToken: Redacted.make(`token-${agentId}`) })
  return agentId
})

const exec = (agentId: string, command: string, options: Partial<ExecRequest> = {}) =>
  Effect.gen(function*() {
    const engine = yield* AgentEngine
    return yield* engine.exec(agentId, { command, timeoutMs: 60_000, maxOutputBytes: 1024 * 1024, ...options })
  })

const homeOf = (agentId: string) => Path.join(root, "engine", "agents", agentId)
const sizeOf = (file: string) => Fs.statSync(file).size

if (bwrapRuns && process.getuid?.() === 0 && disksAvailable) {
  describe("a hostile tenant against its disk", () => {
    layer(Layer.fresh(engineLayer), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
      it.effect("a disk hog stops at its agent's cap, and another agent goes on writing and answering", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const hog = yield* provisioned
          const neighbour = yield* provisioned
          // The host's disk has far more room than the cap: only the cap can stop the hog.
          const hostFree = Fs.statfsSync(root).bavail * Fs.statfsSync(root).bsize
          assert.isAbove(hostFree, 1024 * MiB)

          // 200 MiB in one file, with the per-file limit (1 GiB) far off.
          const neighbourRun = yield* Effect.forkChild(exec(neighbour, "sleep 2; head -c 8388608 /dev/zero > mine && echo wrote"))
          const one = yield* exec(hog, "dd if=/dev/zero of=$HOME/fill bs=1M count=200 2>&1; echo \"exit $?\"")
          assert.match(one.stdout, /No space left on device/, one.stdout)
          assert.match(one.stdout, /exit 1/)
          const written = sizeOf(Path.join(homeOf(hog), "fill"))
          // It really wrote up to the cap, and not past it.
          assert.isAbove(written, diskBytes / 2, `${written}`)
          assert.isAtMost(written, diskBytes)
          if (process.env["TEST_LOGS"] === "print") console.log(`disk: one file stopped at ${written} bytes of ${diskBytes}`)

          const neighbourResult = yield* Fiber.join(neighbourRun)
          assert.strictEqual(neighbourResult.stdout.trim(), "wrote", neighbourResult.stderr)
          assert.strictEqual(sizeOf(Path.join(homeOf(neighbour), ".openclaw", "workspace", "mine")), 8 * MiB)
          // The neighbour answers at once while the hog's disk is full.
          const asked = Date.now()
          assert.strictEqual((yield* exec(neighbour, "echo here")).stdout.trim(), "here")
          assert.isBelow(Date.now() - asked, 5_000)
          // The cap and the usage are reported, near the cap.
          assert.strictEqual(engine.agentLimits?.diskBytes, diskBytes)
          assert.isAbove((yield* engine.diskUsage!(hog)) ?? 0, diskBytes / 2)

          // Many small files are capped together: what a per-file limit cannot do.
          yield* exec(hog, "rm -f $HOME/fill")
          const many = yield* exec(
            hog,
            "i=0; while [ $i -lt 120 ]; do head -c 1048576 /dev/zero > part-$i 2>/dev/null || break; i=$((i+1)); done; echo \"files $i\""
          )
          const files = Number(/files (\d+)/.exec(many.stdout)?.[1] ?? "-1")
          assert.isAbove(files, 16, many.stdout)
          assert.isBelow(files, 64, many.stdout)
          // The hog's own agent still works once it frees room.
          const freed = yield* exec(hog, "rm -f part-*; echo ok > note && cat note")
          assert.strictEqual(freed.stdout.trim(), "ok")
        }))

      it.effect("a destroyed agent's filesystem is unmounted and its image deleted", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const agentId = yield* provisioned
          const home = homeOf(agentId)
          assert.include(mountPoints(), home)
          const image = Path.join(root, "engine", "agents-disks", `${agentId}.ext4`)
          assert.isTrue(Fs.existsSync(image))
          yield* engine.destroy(agentId)
          assert.notInclude(mountPoints(), home)
          assert.isFalse(Fs.existsSync(image))
          assert.isFalse(Fs.existsSync(home))
        }))
    })

    it("leaves nothing mounted when the engine ends", async () => {
      assert.deepStrictEqual(mountedUnder(Path.join(root, "engine")), [])
    })
  })
}
