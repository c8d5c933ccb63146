/**
 * The behaviour every AgentEngine adapter must show, written once against the port. Each adapter's test file calls
 * `agentEngineContract` with a layer; an adapter is done when the whole suite passes on it. What the port keeps to
 * itself (a gateway's environment) is seen through a probe the adapter's test passes in; without it, the tests that
 * need it are left out.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Exit, type Layer, Option, Redacted, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { AgentEngine, type WorkspaceFile } from "../AgentEngine.ts"
import * as EngineEnvironment from "../EngineEnvironment.ts"
import { EngineVersion } from "@cairn/domain"
import { configContract } from "./ConfigContract.ts"
import { consoleContract } from "./ConsoleContract.ts"
import { filesContract } from "./FilesContract.ts"
import { appsContract } from "./AppsContract.ts"
import { channelsContract } from "./ChannelsContract.ts"
import { chatContract, type ChatContractOptions } from "./ChatContract.ts"
import { loggedBy } from "./LoggedBy.ts"
import { provisioningContract } from "./ProvisioningContract.ts"
import { snapshotsContract } from "./SnapshotsContract.ts"
import { tasksContract } from "./TasksContract.ts"

export interface ContractOptions<R = never> {
  /**
   * Runs an operation that waits for a gateway to become ready (`start`, `restart`). An adapter whose readiness
   * waits on a clock the test controls passes a function that moves that clock, such as `advanceTestClock`; by
   * default the operation simply runs. The suite also passes operations it expects to be refused, so that a wrong
   * acceptance fails at once instead of waiting for a clock that never moves.
   */
  readonly driveTime?: <A, E>(operation: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Run on the wall clock instead of TestClock: for adapters that supervise real processes. */
  readonly live?: boolean
  /** How long the layer may take to build and each test to run; real gateways need tens of seconds. */
  readonly timeout?: Duration.Input
  /**
   * The environment the agent's gateway received, as its process holds it (/proc/<pid>/environ on a real one), or
   * undefined when the probe finds no gateway. The suite asks only while the gateway runs. The probe may use the
   * services the engine's layer provides, such as a control service.
   */
  readonly environmentOf?: (agentId: string) => Effect.Effect<Readonly<Record<string, string>> | undefined, never, R>
  /**
   * The skills the agent's running gateway itself has loaded, as it reports them (OpenClaw's `skills.status` RPC):
   * proof that a skill written while it runs reaches it, beyond what `listSkills` reads from disk. The suite asks only
   * while the gateway runs; without the probe, that test checks `listSkills` alone.
   */
  readonly loadedSkills?: (
    agentId: string
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string; readonly description: string }>, never, R>
  /** A port the engine uses itself for this agent (its gateway's): `appEndpoint` must refuse it (AppsContract.ts). */
  readonly ownedAppPort?: (agentId: string) => Effect.Effect<number, never, R>
  /** Starts an app inside the running agent (AppsContract.ts `serveApp`): for agents with networks of their own. */
  readonly serveApp?: (agentId: string) => Effect.Effect<number, never, R | Scope.Scope>
  /**
   * One half of the suite instead of all of it: `lifecycle` (versions, provisioning, starts, stops, restarts, devices,
   * token and environment, the destroy) or `workspace` (skills, workspace files, and the sections: files, console,
   * config, tasks, snapshots, apps, channels, provisioning). An adapter whose suite takes many minutes (real
   * gateways) runs the halves from two test files, which run side by side; each half starts its own shared agents.
   */
  readonly part?: ContractPart
  /**
   * Runs the chat section (ChatContract.ts, in the `workspace` half): chat turns, sessions and history, models. Opt-in
   * while adapters are being taught to chat; `prepare` makes a running agent able to answer (a model it can reach).
   */
  readonly chat?: ChatContractOptions<R>
}

/** The halves of the contract (`ContractOptions.part`). */
export type ContractPart = "lifecycle" | "workspace"

/**
 * A `driveTime` for adapters that wait on Effect's Clock: moves the TestClock forward by `step`, again and again,
 * until the operation is done.
 */
export const advanceTestClock = (step: Duration.Input) => <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.raceFirst(operation, Effect.forever(TestClock.adjust(step)))

let counter = 0
/** An agent id no other test uses, so one engine serves the whole suite. */
export const freshAgent = (prefix = "agent") =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

/** A version no engine offers: newer than any CalVer release, so only the version check can refuse it. */
const unknownVersion = "9999.12.31"

const token = (value = freshAgent("token")) => Redacted.make(value)
/** A value no other test uses, so finding it proves where it came from. */
const secret = () => Redacted.make(freshAgent("secret-value"))


const encoder = new TextEncoder()
const textFile = (path: string, content: string): WorkspaceFile => ({ path, content: encoder.encode(content) })
/** A SKILL.md OpenClaw accepts and finds eligible anywhere: a name, a description, no requirements. */
const skillMd = (name: string, description: string) =>
  textFile("SKILL.md", `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nAnswer with the word "${name}".\n`)
/** Bytes that are no text at all, to show that files are copied as bytes. */
const binaryFile = (path: string) => ({ path, content: new Uint8Array([0, 255, 128, 10, 13, 0xfe]) })

/** Files as values assertions compare and print well: text when the bytes are UTF-8, hex otherwise. */
const comparable = (files: ReadonlyArray<WorkspaceFile> | undefined) =>
  files?.map((file) => ({ path: file.path, content: readable(file.content) }))
const readable = (bytes: Uint8Array | undefined) => {
  if (bytes === undefined) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return `hex:${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`
  }
}
const sortedByPath = (files: ReadonlyArray<WorkspaceFile>) => [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))

export const agentEngineContract = <R = never>(
  adapter: string,
  engineLayer: Layer.Layer<AgentEngine | R>,
  options: ContractOptions<R> = {}
) => {
  const drive = options.driveTime ?? (<A, E>(operation: Effect.Effect<A, E>) => operation)
  const timeout = options.timeout === undefined ? undefined : Duration.toMillis(Duration.fromInputUnsafe(options.timeout))

  /** The oldest and newest versions; the suite needs two to test upgrades and downgrades. */
  const oldestAndNewest = Effect.gen(function*() {
    const versions = yield* (yield* AgentEngine).listVersions
    assert.isAtLeast(versions.length, 2, "the contract needs at least two installable versions")
    return { oldest: versions[0]!, newest: versions[versions.length - 1]! }
  })

  const provisioned = (version: string) =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = freshAgent()
      yield* engine.provision(agentId, { version, gatewayToken: token() })
      return agentId
    })

  /**
   * One provisioned agent shared by the workspace and skill tests, which each use names of their own in it: on a real
   * engine every `listSkills` costs seconds, a fresh agent more.
   */
  let workspaceAgent: string | undefined
  const sharedAgent = Effect.gen(function*() {
    if (workspaceAgent === undefined) {
      const { newest } = yield* oldestAndNewest
      workspaceAgent = yield* provisioned(newest)
    }
    return workspaceAgent
  })

  /**
   * Running agents shared by the tests that only need one running on a given version: a real gateway takes 10–30 s
   * and most of a gigabyte to start, so each version's agent is started once and handed from test to test, and
   * started again (or replaced) only when a test stopped it, moved it to another version or destroyed it. The first
   * start test's agent becomes the newest version's.
   */
  const runningOn = new Map<string, string>()
  const aRunningAgentOn = (version: string) =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const shared = runningOn.get(version)
      const status = shared === undefined ? undefined : Option.getOrUndefined(yield* Effect.option(engine.status(shared)))
      if (shared !== undefined && status?.version === version) {
        if (status.state !== "running") yield* drive(engine.start(shared))
        return shared
      }
      // None yet, or gone (destroyed) or on another version (upgraded) since: a new one takes its place.
      const agentId = yield* provisioned(version)
      runningOn.set(version, agentId)
      yield* drive(engine.start(agentId))
      return agentId
    })
  /** A running agent of the newest version, shared (see `aRunningAgentOn`). */
  const aRunningAgent = Effect.flatMap(oldestAndNewest, ({ newest }) => aRunningAgentOn(newest))
  /** A running agent of the oldest version, shared; the upgrade test takes it to the newest. */
  const aRunningOldAgent = Effect.flatMap(oldestAndNewest, ({ oldest }) => aRunningAgentOn(oldest))

  /** Fails the test unless `operation` fails, as a typed error or a defect, and says what it returned instead. */
  const refused = <A, E>(operation: Effect.Effect<A, E>, what: string) =>
    Effect.gen(function*() {
      assert.isTrue(Exit.isFailure(yield* Effect.exit(operation)), `${what} was not refused`)
    })

  const running = (version: string) =>
    Effect.gen(function*() {
      const agentId = yield* provisioned(version)
      yield* drive((yield* AgentEngine).start(agentId))
      return agentId
    })

  const runs = { lifecycle: options.part !== "workspace", workspace: options.part !== "lifecycle" }
  const title = `${adapter} honours the AgentEngine contract${options.part === undefined ? "" : ` (${options.part})`}`

  return describe(title, () =>
    layer(engineLayer, {
      excludeTestServices: options.live ?? false,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout })
    })((it) => {
      if (runs.lifecycle) {
        it.effect("lists distinct installable versions, oldest first", () =>
          Effect.gen(function*() {
            const versions = yield* (yield* AgentEngine).listVersions
            assert.isAtLeast(versions.length, 1)
            assert.strictEqual(new Set(versions).size, versions.length, "a version is listed twice")
            assert.deepStrictEqual([...versions].sort(EngineVersion.order), [...versions])
          }), timeout)

        it.effect("provisions an agent stopped on the requested version", () =>
          Effect.gen(function*() {
            const { oldest } = yield* oldestAndNewest
            const agentId = yield* provisioned(oldest)
            assert.deepStrictEqual(yield* (yield* AgentEngine).status(agentId), { state: "stopped", version: oldest })
          }), timeout)

        it.effect("starts a provisioned agent and reports it running", () =>
          Effect.gen(function*() {
            const { newest } = yield* oldestAndNewest
            const agentId = yield* running(newest)
            assert.deepStrictEqual(yield* (yield* AgentEngine).status(agentId), { state: "running", version: newest })
            runningOn.set(newest, agentId)
          }), timeout)

        it.effect("leaves an agent as it is when it is provisioned again", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest, newest } = yield* oldestAndNewest
            const agentId = yield* aRunningOldAgent
            yield* engine.provision(agentId, { version: oldest, gatewayToken: token() })
            yield* engine.provision(agentId, { version: newest, gatewayToken: token() })
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: oldest })
          }), timeout)

        it.effect("refuses to provision a version it does not offer", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = freshAgent()
            const error = yield* Effect.flip(engine.provision(agentId, { version: unknownVersion, gatewayToken: token() }))
            assert.deepInclude(error, { _tag: "VersionNotOffered", version: unknownVersion })
            assert.strictEqual((yield* Effect.flip(engine.status(agentId)))._tag, "AgentNotProvisioned")
          }), timeout)

        it.effect("knows nothing of an agent that was never provisioned", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = freshAgent("never")
            const errors = yield* Effect.all([
              Effect.flip(engine.status(agentId)),
              Effect.flip(drive(engine.start(agentId))),
              Effect.flip(engine.stop(agentId)),
              Effect.flip(drive(engine.restart(agentId))),
              Effect.flip(engine.listDevices(agentId)),
              Effect.flip(engine.relaunchScripts(agentId)),
              Effect.flip(engine.rotateGatewayToken(agentId, token())),
              Effect.flip(engine.setEnvironment(agentId, { CONTRACT_SECRET: secret() })),
              Effect.flip(engine.installSkill(agentId, { name: "contract-skill", files: [skillMd("contract-skill", "Never installed")] })),
              Effect.flip(engine.removeSkill(agentId, "contract-skill")),
              Effect.flip(engine.readSkill(agentId, "contract-skill")),
              Effect.flip(engine.listSkills(agentId)),
              Effect.flip(engine.writeWorkspaceFiles(agentId, [textFile("AGENTS.md", "never written")])),
              Effect.flip(engine.readWorkspaceFile(agentId, "AGENTS.md"))
            ])
            for (const error of errors) assert.deepInclude(error, { _tag: "AgentNotProvisioned", agentId })
          }), timeout)

        it.effect("refuses a restart to a version it does not offer, and keeps the agent running", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest } = yield* oldestAndNewest
            const agentId = yield* aRunningOldAgent
            const error = yield* Effect.flip(drive(engine.restart(agentId, { version: unknownVersion })))
            assert.deepInclude(error, { _tag: "VersionNotOffered", version: unknownVersion })
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: oldest })
          }), timeout)

        it.effect("refuses a restart to an older version, and keeps the agent running", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest, newest } = yield* oldestAndNewest
            const agentId = yield* aRunningAgent
            const error = yield* Effect.flip(drive(engine.restart(agentId, { version: oldest })))
            assert.deepInclude(error, { _tag: "DowngradeRefused", from: newest, to: oldest })
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        it.effect("restarts an agent on its own version when none is given", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest } = yield* oldestAndNewest
            const agentId = yield* aRunningOldAgent
            yield* drive(engine.restart(agentId))
            yield* drive(engine.restart(agentId, { version: oldest }))
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: oldest })
          }), timeout)

        it.effect("restarts an agent onto a newer version and runs it", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { newest } = yield* oldestAndNewest
            const agentId = yield* aRunningOldAgent
            yield* drive(engine.restart(agentId, { version: newest }))
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        it.effect("starts a stopped agent when asked to restart it", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest, newest } = yield* oldestAndNewest
            const agentId = yield* provisioned(oldest)
            yield* drive(engine.restart(agentId, { version: newest }))
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        it.effect("lists devices of a running agent only: once stopped, the engine command fails", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { newest } = yield* oldestAndNewest
            const agentId = yield* aRunningAgent
            const devices = yield* engine.listDevices(agentId)
            assert.isArray(devices.pending)
            assert.isArray(devices.paired)
            yield* engine.stop(agentId)
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "stopped", version: newest })
            const error = yield* Effect.flip(engine.listDevices(agentId))
            assert.deepInclude(error, { _tag: "EngineCliError", agentId })
            yield* engine.stop(agentId)
            assert.strictEqual((yield* engine.status(agentId)).state, "stopped", "stopping twice is harmless")
          }), timeout)

        it.effect("starts an agent again after a stop, and a second start of a running agent changes nothing", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { newest } = yield* oldestAndNewest
            const agentId = yield* aRunningAgent
            yield* engine.stop(agentId)
            yield* drive(engine.start(agentId))
            yield* drive(engine.start(agentId))
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        it.effect("relaunches scripts and rotates the gateway token without stopping the gateway", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { newest } = yield* oldestAndNewest
            const agentId = yield* aRunningAgent
            yield* engine.relaunchScripts(agentId)
            yield* engine.rotateGatewayToken(agentId, token())
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        it.effect("takes a new environment without stopping a running gateway", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { newest } = yield* oldestAndNewest
            const agentId = yield* aRunningAgent
            yield* engine.setEnvironment(agentId, { CONTRACT_SECRET: secret() })
            yield* engine.setEnvironment(agentId, {})
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
          }), timeout)

        const environmentOf = options.environmentOf
        if (environmentOf !== undefined) {
          /** The running gateway's environment; the agent must be running. */
          const gatewayEnvironment = (agentId: string) =>
            Effect.gen(function*() {
              const environment = yield* environmentOf(agentId)
              assert.isDefined(environment, `the probe sees no gateway of ${agentId}`)
              return environment!
            })

          it.effect("gives a gateway the environment set before it started", () =>
            Effect.gen(function*() {
              const engine = yield* AgentEngine
              const { newest } = yield* oldestAndNewest
              const agentId = yield* provisioned(newest)
              const [first, second] = [secret(), secret()]
              yield* engine.setEnvironment(agentId, { CONTRACT_SECRET: first, CONTRACT_OTHER: second })
              yield* drive(engine.start(agentId))
              const environment = yield* gatewayEnvironment(agentId)
              assert.strictEqual(environment["CONTRACT_SECRET"], Redacted.value(first))
              assert.strictEqual(environment["CONTRACT_OTHER"], Redacted.value(second))
              yield* engine.stop(agentId) // a real gateway holds most of a gigabyte: free it for the next tests
            }), timeout)

          it.effect("keeps a running gateway's environment until it restarts, then gives it the one set last", () =>
            Effect.gen(function*() {
              const engine = yield* AgentEngine
              const { newest } = yield* oldestAndNewest
              const agentId = yield* provisioned(newest)
              const [before, after] = [secret(), secret()]
              yield* engine.setEnvironment(agentId, { CONTRACT_SECRET: before })
              yield* drive(engine.start(agentId))
              yield* engine.setEnvironment(agentId, { CONTRACT_OTHER: after })
              const unchanged = yield* gatewayEnvironment(agentId)
              assert.strictEqual(unchanged["CONTRACT_SECRET"], Redacted.value(before))
              assert.isUndefined(unchanged["CONTRACT_OTHER"], "a running gateway saw a change before its restart")
              yield* drive(engine.restart(agentId))
              const restarted = yield* gatewayEnvironment(agentId)
              assert.isUndefined(restarted["CONTRACT_SECRET"], "a variable set before survived its replacement")
              assert.strictEqual(restarted["CONTRACT_OTHER"], Redacted.value(after))
              yield* engine.stop(agentId)
              yield* engine.setEnvironment(agentId, {})
              yield* drive(engine.start(agentId))
              assert.isUndefined((yield* gatewayEnvironment(agentId))["CONTRACT_OTHER"], "a stop and start takes it too")
              yield* engine.stop(agentId)
            }), timeout)

          it.effect("lets no variable override the engine's own, and the gateway still works", () =>
            Effect.gen(function*() {
              const engine = yield* AgentEngine
              const { newest } = yield* oldestAndNewest
              const agentId = yield* provisioned(newest)
              const value = secret()
              const warnings = yield* loggedBy(engine.setEnvironment(agentId, {
                HOME: Redacted.make("/overridden"),
                PATH: Redacted.make("/overridden"),
                OPENCLAW_GATEWAY_TOKEN: Redacted.make("overridden"),
                CONTRACT_SECRET: value
              }))
              assert.deepStrictEqual(warnings, [EngineEnvironment.refusedWarning(agentId, ["HOME", "PATH", "OPENCLAW_GATEWAY_TOKEN"])])
              yield* drive(engine.start(agentId))
              const environment = yield* gatewayEnvironment(agentId)
              assert.strictEqual(environment["CONTRACT_SECRET"], Redacted.value(value))
              assert.isDefined(environment["HOME"], "the engine gives every gateway a HOME of its own")
              assert.notStrictEqual(environment["HOME"], "/overridden")
              assert.notStrictEqual(environment["PATH"], "/overridden")
              assert.notStrictEqual(environment["OPENCLAW_GATEWAY_TOKEN"], "overridden")
              const devices = yield* engine.listDevices(agentId)
              assert.isArray(devices.pending)
              yield* engine.stop(agentId)
            }), timeout)

          it.effect("leaves out a variable no process environment can hold, and starts the gateway with the rest", () =>
            Effect.gen(function*() {
              const engine = yield* AgentEngine
              const { newest } = yield* oldestAndNewest
              const agentId = yield* provisioned(newest)
              const value = secret()
              const warnings = yield* loggedBy(engine.setEnvironment(agentId, {
                "NOT=A_NAME": Redacted.make("x"),
                "": Redacted.make("x"),
                CONTRACT_NUL: Redacted.make("before\0after"),
                CONTRACT_SECRET: value
              }))
              assert.deepStrictEqual(warnings, [EngineEnvironment.refusedWarning(agentId, ["NOT=A_NAME", "", "CONTRACT_NUL"])])
              yield* drive(engine.start(agentId))
              const environment = yield* gatewayEnvironment(agentId)
              assert.strictEqual(environment["CONTRACT_SECRET"], Redacted.value(value))
              assert.isUndefined(environment["CONTRACT_NUL"])
              assert.isFalse(Object.keys(environment).some((name) => name.startsWith("NOT")), "a name with = was passed on")
              yield* engine.stop(agentId)
            }), timeout)
        }
      }

      if (runs.workspace) {
        it.effect("installs a skill where the engine finds it: listed under its SKILL.md name as an eligible workspace skill", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* sharedAgent
            const folder = freshAgent("contract-folder").toLowerCase()
            const name = freshAgent("contract-skill").toLowerCase()
            const files = [
              skillMd(name, "A skill the contract installs"),
              textFile("scripts/hello.sh", "#!/bin/sh\necho hello\n"),
              textFile("references/deep/notes.md", "Nested notes\n"),
              binaryFile("assets/blob.bin")
            ]
            yield* engine.installSkill(agentId, { name: folder, files })
            const skills = yield* engine.listSkills(agentId)
            // OpenClaw names a workspace skill after its SKILL.md's `name`; the folder's name only stands in without one.
            assert.deepStrictEqual(skills.filter((skill) => skill.name === name), [{ name, source: "workspace", eligible: true }])
            assert.isUndefined(skills.find((skill) => skill.name === folder), "listed under its folder's name")
            assert.isTrue(skills.some((skill) => skill.source !== "workspace"), "the engine's own skills are not listed")
            assert.deepStrictEqual(comparable(yield* engine.readSkill(agentId, folder)), comparable(sortedByPath(files)))
            const script = yield* engine.readWorkspaceFile(agentId, `skills/${folder}/scripts/hello.sh`)
            assert.strictEqual(readable(script), "#!/bin/sh\necho hello\n", "the skill is not in the workspace's skills folder")
          }), timeout)

        it.effect("replaces a skill installed again whole: files only the old copy had are gone", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* sharedAgent
            const folder = freshAgent("contract-replaced").toLowerCase()
            yield* engine.installSkill(agentId, {
              name: folder,
              files: [skillMd(folder, "First copy"), textFile("old-only.md", "old"), textFile("old-dir/inside.md", "old"), textFile("kept.md", "v1")]
            })
            const second = [skillMd(folder, "Second copy"), textFile("kept.md", "v2"), textFile("new-dir/new.md", "new")]
            yield* engine.installSkill(agentId, { name: folder, files: second })
            assert.deepStrictEqual(comparable(yield* engine.readSkill(agentId, folder)), comparable(sortedByPath(second)))
            assert.isUndefined(yield* engine.readWorkspaceFile(agentId, `skills/${folder}/old-only.md`))
          }), timeout)

        it.effect("removes a skill: the engine no longer lists it, there is nothing to read, and removing it again is harmless", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* sharedAgent
            const folder = freshAgent("contract-removed").toLowerCase()
            yield* engine.installSkill(agentId, { name: folder, files: [skillMd(folder, "Soon removed"), textFile("extra.md", "x")] })
            yield* engine.removeSkill(agentId, folder)
            assert.isUndefined(yield* engine.readSkill(agentId, folder))
            assert.isUndefined((yield* engine.listSkills(agentId)).find((skill) => skill.name === folder), "a removed skill is listed")
            yield* engine.removeSkill(agentId, folder)
            yield* engine.removeSkill(agentId, freshAgent("contract-never").toLowerCase())
            assert.isUndefined(yield* engine.readSkill(agentId, freshAgent("contract-never").toLowerCase()))
          }), timeout)

        const loadedSkills = options.loadedSkills
        it.effect("lets a running gateway take a skill installed, replaced and removed while it runs", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* aRunningAgent
            const folder = freshAgent("contract-live").toLowerCase()
            const name = `${folder}-skill`
            yield* engine.installSkill(agentId, { name: folder, files: [skillMd(name, "First copy")] })
            const listed = (yield* engine.listSkills(agentId)).filter((skill) => skill.name === name)
            assert.deepStrictEqual(listed, [{ name, source: "workspace", eligible: true }])
            if (loadedSkills !== undefined) {
              yield* engine.installSkill(agentId, { name: folder, files: [skillMd(name, "Second copy")] })
              assert.deepInclude((yield* loadedSkills(agentId)).find((skill) => skill.name === name), { description: "Second copy" })
              yield* engine.removeSkill(agentId, folder)
              assert.isUndefined((yield* loadedSkills(agentId)).find((skill) => skill.name === name), "the gateway still has it")
            }
            assert.strictEqual((yield* engine.status(agentId)).state, "running")
          }), timeout)

        it.effect("writes workspace files into nested folders and reads back their bytes, leaving other files alone", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* sharedAgent
            const dir = freshAgent("contract-files")
            const first = [textFile(`${dir}/AGENTS.md`, "# Agents\n"), textFile(`${dir}/notes/deep/er/day.md`, "a note"), binaryFile(`${dir}/blob.bin`)]
            yield* engine.writeWorkspaceFiles(agentId, first)
            for (const file of first) {
              assert.deepStrictEqual(readable(yield* engine.readWorkspaceFile(agentId, file.path)), readable(file.content), file.path)
            }
            yield* engine.writeWorkspaceFiles(agentId, [textFile(`${dir}/AGENTS.md`, "# Agents, again\n")])
            assert.strictEqual(readable(yield* engine.readWorkspaceFile(agentId, `${dir}/AGENTS.md`)), "# Agents, again\n")
            assert.strictEqual(readable(yield* engine.readWorkspaceFile(agentId, `${dir}/notes/deep/er/day.md`)), "a note")
            assert.isUndefined(yield* engine.readWorkspaceFile(agentId, `${dir}/missing.md`))
            assert.isUndefined(yield* engine.readWorkspaceFile(agentId, `${dir}/notes`), "a folder is no file")
            yield* engine.writeWorkspaceFiles(agentId, [])
          }), timeout)

        it.effect("refuses workspace paths and skill names that lead outside the workspace", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const agentId = yield* sharedAgent
            // On OpenClaw, the agent's config sits just outside the workspace: reading it would leak the engine's files.
            for (const path of ["../openclaw.json", "notes/../../openclaw.json", "/etc/hostname", "", ".", "a//b", "..\\x"]) {
              yield* refused(engine.readWorkspaceFile(agentId, path), `reading ${JSON.stringify(path)}`)
              yield* refused(engine.writeWorkspaceFiles(agentId, [textFile(path, "escaped")]), `writing ${JSON.stringify(path)}`)
            }
            const skill = (name: string, path = "SKILL.md") => ({ name, files: [textFile(path, "---\nname: x\ndescription: x\n---\n")] })
            for (const name of ["..", ".", "", "a/b", "/tmp", ".hidden"]) {
              yield* refused(engine.installSkill(agentId, skill(name)), `installing skill ${JSON.stringify(name)}`)
              yield* refused(engine.readSkill(agentId, name), `reading skill ${JSON.stringify(name)}`)
              yield* refused(engine.removeSkill(agentId, name), `removing skill ${JSON.stringify(name)}`)
            }
            const folder = freshAgent("contract-escape").toLowerCase()
            yield* refused(engine.installSkill(agentId, skill(folder, "../../escaped.md")), "a skill file outside its folder")
            assert.isUndefined(yield* engine.readSkill(agentId, folder), "a refused install left a folder")
          }), timeout)

        const section = {
          it,
          timeout,
          drive,
          sharedAgent,
          aRunningAgent,
          freshAgent: Effect.flatMap(oldestAndNewest, ({ newest }) => provisioned(newest))
        }
        filesContract(section)
        consoleContract(section)
        configContract(section)
        tasksContract(section)
        snapshotsContract(section)
        appsContract(section, {
          ...(options.ownedAppPort === undefined ? {} : { ownedPort: options.ownedAppPort }),
          ...(options.serveApp === undefined ? {} : { serveApp: options.serveApp })
        })
        channelsContract(section)
        provisioningContract(section)
        if (options.chat !== undefined) chatContract(section, options.chat)
      }

      if (runs.lifecycle) {
        it.effect("destroys an agent for good, and destroying it again is harmless", () =>
          Effect.gen(function*() {
            const engine = yield* AgentEngine
            const { oldest } = yield* oldestAndNewest
            // The last test: it takes the shared running agent, which it destroys.
            const agentId = yield* aRunningAgent
            yield* engine.writeWorkspaceFiles(agentId, [textFile("MEMORY.md", "remembered")])
            yield* engine.destroy(agentId)
            assert.deepInclude(yield* Effect.flip(engine.status(agentId)), { _tag: "AgentNotProvisioned", agentId })
            assert.deepInclude(yield* Effect.flip(drive(engine.start(agentId))), { _tag: "AgentNotProvisioned", agentId })
            yield* engine.destroy(agentId)
            yield* engine.destroy(freshAgent("never"))
            yield* engine.provision(agentId, { version: oldest, gatewayToken: token() })
            assert.deepStrictEqual(yield* engine.status(agentId), { state: "stopped", version: oldest }, "a new agent")
            assert.isUndefined(yield* engine.readWorkspaceFile(agentId, "MEMORY.md"), "a new agent has the old one's workspace")
          }), timeout)
      }
    }))
}
