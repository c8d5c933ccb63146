/**
 * The adapter against a hostile tenant (decision 0041), on the stand-in engine with real sandboxes: an agent owns its
 * home and can put anything there, symlinks and planted pids included, and Cairn (root in production) must neither
 * follow the one nor trust the other. Each case first checks that the attack is really in place (the symlink exists
 * and leads to the victim; the planted pid is a live process that looks like a gateway), then that Cairn refused it
 * with the port's errors and left the victim as it was, byte for byte.
 */
import { AgentEngine, type ChannelSpec } from "@cairn/agent-engine"
import { freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Stream } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { metaDirOf } from "../src/AgentHome.ts"
import { processIdentity, readPidRecord, reapStale } from "../src/GatewayProcess.ts"
import { HomeTampered } from "../src/HomeFiles.ts"
import { bwrapRuns, reserveGatewayPorts } from "../src/testing/index.ts"
import { engineProcess } from "./fixtures/EngineProcess.ts"
import { standInEngine } from "./fixtures/StandInEngine.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-hostile-tenant-"))
const victims: Array<ChildProcess> = []
afterAll(() => {
  for (const victim of victims) victim.kill("SIGKILL")
  Fs.rmSync(dataDir, { recursive: true, force: true })
})


const engineAt = (name: string, basePort: number) => standInEngine({ dataDir: Path.join(dataDir, name), basePort })

const text = (path: string, content: string) => ({ path, content: new TextEncoder().encode(content) })
const skillMd = (name: string) => text("SKILL.md", `---\nname: ${name}\ndescription: hostile\n---\n`)
const version = "2026.10.2"

/** Everything under `dir`, as it is on disk: each entry's kind, mode, and its bytes or target. Symlinks not followed. */
const snapshot = (dir: string): Record<string, string> => {
  const result: Record<string, string> = {}
  const walk = (path: string, relative: string) => {
    const stat = Fs.lstatSync(path)
    const mode = (stat.mode & 0o7777).toString(8)
    if (stat.isSymbolicLink()) result[relative] = `symlink ${Fs.readlinkSync(path)}`
    else if (stat.isFile()) result[relative] = `file ${mode} ${stat.mtimeMs} ${Fs.readFileSync(path).toString("base64")}`
    else if (stat.isDirectory()) {
      result[relative] = `dir ${mode} ${stat.mtimeMs}`
      for (const name of Fs.readdirSync(path).sort()) walk(Path.join(path, name), `${relative}/${name}`)
    } else result[relative] = "other"
  }
  walk(dir, ".")
  return result
}

/** The error an operation failed with; it must fail. */
const failure = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

/** An EngineUnavailable whose cause says a path in the agent's home is not plain. */
const assertTampered = (error: { readonly _tag: string }, operation: string) => {
  assert.strictEqual(error._tag, "EngineUnavailable", operation)
  const cause = (error as unknown as { readonly cause: unknown }).cause
  assert.instanceOf(cause, HomeTampered, operation)
  assert.include((cause as Error).message, "is not a plain folder or file", operation)
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A process that looks like a gateway to a check by command line, in a group and session of its own. */
const spawnVictim = (): number => {
  const victim = spawn("bash", ["-c", "exec -a openclaw-fake sleep 60"], { detached: true, stdio: "ignore" })
  victims.push(victim)
  return victim.pid!
}

describe("a hostile tenant", () => {
  describe("row 1: `.openclaw` replaced with a symlink to another agent's, or to a host folder", () => {
    const name = "row1"
    const homeOf = (agentId: string) => Path.join(dataDir, name, "agents", agentId)

    it.live("uploads, skills, config, channels and reads through the engine all fail, and the victim is unchanged", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        const [attacker, victim] = [freshAgent(), freshAgent()]
        for (const id of [attacker, victim]) yield* engine.provision(id, { version, gatewayToken: Redacted.make("t") })
        yield* engine.writeWorkspaceFiles(victim, [text("secret.md", "the victim's secret")])
        yield* engine.installSkill(victim, { name: "victims-skill", files: [skillMd("victims-skill")] })
        // A plain host folder laid out like a state folder, so that anything following the symlink would find files.
        const host = Path.join(dataDir, "host-folder")
        Fs.mkdirSync(Path.join(host, "workspace", "skills", "victims-skill"), { recursive: true })
        Fs.writeFileSync(Path.join(host, "openclaw.json"), "{}\n")
        Fs.writeFileSync(Path.join(host, "workspace", "secret.md"), "the host's secret")
        Fs.writeFileSync(Path.join(host, "workspace", "skills", "victims-skill", "SKILL.md"), "host")

        const state = Path.join(homeOf(attacker), ".openclaw")
        Fs.renameSync(state, `${state}-own`)
        for (const target of [Path.join(homeOf(victim), ".openclaw"), host]) {
          Fs.rmSync(state, { force: true })
          Fs.symlinkSync(target, state)
          // The attack is in place: the attacker's state folder is a symlink, and reading through it finds the victim's files.
          assert.isTrue(Fs.lstatSync(state).isSymbolicLink())
          assert.strictEqual(Fs.readlinkSync(state), target)
          assert.include(Fs.readFileSync(Path.join(state, "workspace", "secret.md"), "utf8"), "secret")
          const before = { victim: snapshot(homeOf(victim)), host: snapshot(host) }

          assertTampered(yield* failure(engine.writeWorkspaceFiles(attacker, [text("secret.md", "overwritten"), text("new/upload.md", "x")])), "writeWorkspaceFiles")
          assertTampered(yield* failure(engine.installSkill(attacker, { name: "victims-skill", files: [skillMd("victims-skill")] })), "installSkill")
          assertTampered(yield* failure(engine.installSkill(attacker, { name: "planted", files: [skillMd("planted")] })), "installSkill (new)")
          assertTampered(yield* failure(engine.removeSkill(attacker, "victims-skill")), "removeSkill")
          assertTampered(yield* failure(engine.readSkill(attacker, "victims-skill")), "readSkill")
          assertTampered(yield* failure(engine.readWorkspaceFile(attacker, "secret.md")), "readWorkspaceFile")
          assertTampered(yield* failure(engine.readWorkspaceFileWithin(attacker, "secret.md", 1_000)), "readWorkspaceFileWithin")
          assertTampered(yield* failure(engine.scanWorkspace(attacker, { exclude: () => false })), "scanWorkspace")
          assertTampered(yield* failure(engine.restoreWorkspace(attacker, [{ path: "x.md", kind: "file", mode: 0o644, content: Stream.make(new Uint8Array()) }], { exclude: () => false })), "restoreWorkspace")
          const read = yield* failure(engine.readConfig(attacker))
          assert.strictEqual(read._tag, "ConfigUnreadable")
          assert.include(JSON.stringify(read), "is not a plain folder or file")
          const written = yield* failure(engine.writeConfig(attacker, { config: { agents: { defaults: { skipBootstrap: true } } } }))
          assert.strictEqual(written._tag, "ConfigUnreadable")
          const channels: ReadonlyArray<ChannelSpec> = []
          const channelsError = yield* failure(engine.setChannels(attacker, channels))
          assert.strictEqual(channelsError._tag, "ChannelsUnavailable")
          assert.include(JSON.stringify(channelsError), "is not a plain folder or file")
          // The console still runs (in the home, so that the agent can repair it), and makes nothing through the symlink.
          const repaired = yield* engine.exec(attacker, { command: "pwd", timeoutMs: 10_000, maxOutputBytes: 1_000 })
          assert.strictEqual(repaired.stdout.trim(), homeOf(attacker))

          assert.deepStrictEqual(snapshot(homeOf(victim)), before.victim, "the victim's home changed")
          assert.deepStrictEqual(snapshot(host), before.host, "the host folder changed")
        }
        // Cairn's own folder for the agent (its metadata and pid record) is beside the home, where the sandbox shows
        // nothing (unsandboxed, where bubblewrap cannot run, the agent could read it, as it could read anything).
        const meta = metaDirOf(homeOf(attacker))
        assert.isTrue(Fs.existsSync(Path.join(meta, "engine.json")))
        if (bwrapRuns) {
          const peek = yield* engine.exec(attacker, { command: `cat ${meta}/engine.json || ls ${Path.dirname(meta)}`, timeoutMs: 10_000, maxOutputBytes: 1_000 })
          assert.notStrictEqual(peek.exitCode, 0, peek.stdout)
          assert.notInclude(peek.stdout, "slot")
        }
        // Repaired by the agent, its home works again.
        Fs.rmSync(state)
        Fs.renameSync(`${state}-own`, state)
        yield* engine.writeWorkspaceFiles(attacker, [text("mine.md", "mine")])
        assert.strictEqual(new TextDecoder().decode(yield* engine.readWorkspaceFile(attacker, "mine.md")), "mine")
      }).pipe(Effect.provide(engineAt(name, reserveGatewayPorts(2)))), 120_000)

    it.live("a later provision of a tampered home writes nothing through the symlink", () =>
      Effect.gen(function*() {
        const [attacker, victim] = [freshAgent(), freshAgent()]
        const basePort = reserveGatewayPorts(2)
        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          for (const id of [attacker, victim]) yield* engine.provision(id, { version, gatewayToken: Redacted.make("t") })
          // The victim's user has settings of their own: a rewrite by the attacker's provision would show.
          yield* engine.writeWorkspaceFiles(victim, [text("secret.md", "the victim's secret")])
        }).pipe(Effect.provide(engineAt("row1-provision", basePort)))
        const state = Path.join(dataDir, "row1-provision", "agents", attacker, ".openclaw")
        const victimState = Path.join(dataDir, "row1-provision", "agents", victim, ".openclaw")
        Fs.writeFileSync(Path.join(victimState, "openclaw.json"), `// the victim's own\n${Fs.readFileSync(Path.join(victimState, "openclaw.json"), "utf8")}`)
        Fs.rmSync(state, { recursive: true })
        Fs.symlinkSync(victimState, state)
        assert.strictEqual(Fs.readlinkSync(state), victimState)
        const before = snapshot(victimState)
        // Cairn restarts: the next engine provisions the attacker first (it would take the victim's config for its own).
        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          assertTampered(yield* failure(engine.provision(attacker, { version, gatewayToken: Redacted.make("t") })), "provision")
        }).pipe(Effect.provide(engineAt("row1-provision", basePort)))
        assert.deepStrictEqual(snapshot(victimState), before, "the victim's state folder changed")
      }), 120_000)
  })

  describe("rows 2 and 4: planted pids and a pid file aimed at a host file", () => {
    it.live("a `gateway.pid` symlink to a host file is never written, and no planted pid is signalled, across starts, restarts and a stale sweep", () =>
      Effect.gen(function*() {
        const agentId = freshAgent()
        const basePort = reserveGatewayPorts(1)
        const name = "rows2and4"
        const home = Path.join(dataDir, name, "agents", agentId)
        const hostFile = Path.join(dataDir, "admin-token")
        Fs.writeFileSync(hostFile, "the admin token\n", { mode: 0o600 })
        const hostBefore = snapshot(hostFile)
        const victim = spawnVictim()
        // The victim is live and looks like a gateway to the old check (its command line says openclaw).
        assert.isTrue(isAlive(victim))
        yield* Effect.promise(() => waitFor(() => Fs.readFileSync(`/proc/${victim}/cmdline`, "utf8").startsWith("openclaw-fake\0")))
        assert.strictEqual(processIdentity(victim)?.pgrp, victim, "the victim leads a process group, as a gateway's bubblewrap does")

        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          yield* engine.provision(agentId, { version, gatewayToken: Redacted.make("t") })
          // Row 2: the pid file where earlier Cairns wrote it, aimed at a host file; row 4: the victim's pid in every
          // other file the agent could write where a pid or Cairn's metadata might be looked for.
          Fs.symlinkSync(hostFile, Path.join(home, "gateway.pid"))
          assert.strictEqual(Fs.readlinkSync(Path.join(home, "gateway.pid")), hostFile)
          for (const path of [".openclaw/gateway.pid", "cairn-agent.json", ".openclaw/workspace/gateway.pid"]) {
            Fs.mkdirSync(Path.dirname(Path.join(home, path)), { recursive: true })
            Fs.writeFileSync(Path.join(home, path), `${victim}\n`)
          }
          yield* engine.start(agentId)
          const recorded = readPidRecord(metaDirOf(home))
          assert.isDefined(recorded, "the gateway's pid is recorded in Cairn's folder")
          assert.notStrictEqual(recorded!.pid, victim)
          assert.strictEqual(recorded!.startTime, processIdentity(recorded!.pid)?.startTime)
          yield* engine.restart(agentId)
          yield* engine.stop(agentId)
          yield* engine.start(agentId)
        }).pipe(Effect.provide(engineAt(name, basePort)))
        // The layer closed (its gateways stopped); a next Cairn sweeps for stale gateways before it starts the agent.
        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          yield* engine.provision(agentId, { version, gatewayToken: Redacted.make("t") })
          yield* engine.start(agentId)
          yield* engine.stop(agentId)
        }).pipe(Effect.provide(engineAt(name, basePort)))
        // A record whose pid was reused since (the victim's pid, another start time): the sweep leaves it alone.
        Fs.writeFileSync(Path.join(metaDirOf(home), "gateway.pid"), JSON.stringify({ pid: victim, startTime: "1" }))
        yield* Effect.promise(() => reapStale(metaDirOf(home), 500))

        assert.isTrue(isAlive(victim), "the planted pid's process was killed")
        assert.deepStrictEqual(snapshot(hostFile), hostBefore, "the host file behind the pid file changed")
        assert.strictEqual(Fs.readlinkSync(Path.join(home, "gateway.pid")), hostFile)
      }), 120_000)
  })

  describe("row 4, after Cairn is killed", () => {
    it.live("the next Cairn's sweep reaps the gateway the killed one left, and no process whose pid the agent planted", () =>
      Effect.gen(function*() {
        const agentId = freshAgent()
        const basePort = reserveGatewayPorts(1)
        const name = "row4-killed"
        const home = Path.join(dataDir, name, "agents", agentId)
        // The gateway ignores SIGTERM, and the killed engine gave it a minute: it outlives its engine.
        const { child, gatewayPid } = yield* engineProcess(Path.join(dataDir, name), basePort, agentId, "ignore-sigterm", "60 seconds")
        const victim = spawnVictim()
        yield* Effect.promise(() => waitFor(() => Fs.readFileSync(`/proc/${victim}/cmdline`, "utf8").startsWith("openclaw-fake\0")))
        for (const path of ["gateway.pid", ".openclaw/gateway.pid", "cairn-agent.json", ".openclaw/workspace/gateway.pid"]) {
          Fs.mkdirSync(Path.dirname(Path.join(home, path)), { recursive: true })
          Fs.writeFileSync(Path.join(home, path), `${victim}\n`)
        }
        child.kill("SIGKILL")
        yield* Effect.sleep("500 millis")
        assert.isTrue(isAlive(gatewayPid), "the stale gateway outlived its engine")
        assert.isTrue(isAlive(victim))
        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          yield* engine.provision(agentId, { version, gatewayToken: Redacted.make("t") })
          yield* engine.start(agentId)
          assert.strictEqual((yield* engine.status(agentId)).state, "running")
        }).pipe(Effect.provide(engineAt(name, basePort)))
        assert.isFalse(isAlive(gatewayPid), "the stale gateway was reaped")
        assert.isTrue(isAlive(victim), "the planted pid's process was killed")
      }), 120_000)
  })

  describe("row 3: `cairn-agent.json` in the home", () => {
    it.live("as a symlink: never read, never written; as an old home's regular file: migrated once to Cairn's folder", () =>
      Effect.gen(function*() {
        const name = "row3"
        const [linked, migrated] = [freshAgent(), freshAgent()]
        const homeOf = (agentId: string) => Path.join(dataDir, name, "agents", agentId)
        // What the symlink points at looks like metadata (slot 7), so that a read through it would show in the slot.
        const hostFile = Path.join(dataDir, "row3-target.json")
        Fs.writeFileSync(hostFile, JSON.stringify({ version, slot: 7 }))
        const hostBefore = snapshot(hostFile)
        Fs.mkdirSync(homeOf(linked), { recursive: true })
        Fs.symlinkSync(hostFile, Path.join(homeOf(linked), "cairn-agent.json"))
        assert.strictEqual(Fs.readlinkSync(Path.join(homeOf(linked), "cairn-agent.json")), hostFile)
        Fs.mkdirSync(homeOf(migrated), { recursive: true })
        Fs.writeFileSync(Path.join(homeOf(migrated), "cairn-agent.json"), JSON.stringify({ version, slot: 3 }))

        yield* Effect.gen(function*() {
          const engine = yield* AgentEngine
          yield* engine.provision(linked, { version, gatewayToken: Redacted.make("t") })
          yield* engine.provision(migrated, { version, gatewayToken: Redacted.make("t") })
        }).pipe(Effect.provide(engineAt(name, reserveGatewayPorts(8))))

        assert.deepStrictEqual(snapshot(hostFile), hostBefore, "the symlink's target changed")
        const meta = (agentId: string) => JSON.parse(Fs.readFileSync(Path.join(metaDirOf(homeOf(agentId)), "engine.json"), "utf8"))
        assert.notStrictEqual(meta(linked).slot, 7, "the metadata was read through the symlink")
        assert.deepStrictEqual(meta(migrated), { version, slot: 3 })
        assert.isFalse(Fs.existsSync(Path.join(homeOf(migrated), "cairn-agent.json")), "the old metadata is left in the home")
      }), 120_000)
  })
})

const waitFor = async (condition: () => boolean) => {
  for (let attempt = 0; attempt < 100 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 20))
  assert.isTrue(condition())
}
