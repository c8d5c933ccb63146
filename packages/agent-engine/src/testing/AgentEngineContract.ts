/**
 * The behaviour every AgentEngine adapter must show, written once against the port. Each adapter's test file calls
 * `agentEngineContract` with a layer; an adapter is done when the whole suite passes on it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, type Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { AgentEngine } from "../AgentEngine.ts"
import { EngineVersion } from "@cairn/domain"

export interface ContractOptions {
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
}

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

export const agentEngineContract = (adapter: string, engineLayer: Layer.Layer<AgentEngine>, options: ContractOptions = {}) => {
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

  const running = (version: string) =>
    Effect.gen(function*() {
      const agentId = yield* provisioned(version)
      yield* drive((yield* AgentEngine).start(agentId))
      return agentId
    })

  return describe(`${adapter} honours the AgentEngine contract`, () =>
    layer(engineLayer, {
      excludeTestServices: options.live ?? false,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout })
    })((it) => {
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
        }), timeout)

      it.effect("leaves an agent as it is when it is provisioned again", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest, newest } = yield* oldestAndNewest
          const agentId = yield* running(oldest)
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
            Effect.flip(engine.rotateGatewayToken(agentId, token()))
          ])
          for (const error of errors) assert.deepInclude(error, { _tag: "AgentNotProvisioned", agentId })
        }), timeout)

      it.effect("refuses a restart to a version it does not offer, and keeps the agent running", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest } = yield* oldestAndNewest
          const agentId = yield* running(oldest)
          const error = yield* Effect.flip(drive(engine.restart(agentId, { version: unknownVersion })))
          assert.deepInclude(error, { _tag: "VersionNotOffered", version: unknownVersion })
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: oldest })
        }), timeout)

      it.effect("refuses a restart to an older version, and keeps the agent running", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest, newest } = yield* oldestAndNewest
          const agentId = yield* running(newest)
          const error = yield* Effect.flip(drive(engine.restart(agentId, { version: oldest })))
          assert.deepInclude(error, { _tag: "DowngradeRefused", from: newest, to: oldest })
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
        }), timeout)

      it.effect("restarts an agent onto a newer version and runs it", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest, newest } = yield* oldestAndNewest
          const agentId = yield* running(oldest)
          yield* drive(engine.restart(agentId, { version: newest }))
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
        }), timeout)

      it.effect("restarts an agent on its own version when none is given", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest } = yield* oldestAndNewest
          const agentId = yield* running(oldest)
          yield* drive(engine.restart(agentId))
          yield* drive(engine.restart(agentId, { version: oldest }))
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: oldest })
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
          const agentId = yield* running(newest)
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
          const agentId = yield* running(newest)
          yield* engine.stop(agentId)
          yield* drive(engine.start(agentId))
          yield* drive(engine.start(agentId))
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
        }), timeout)

      it.effect("relaunches scripts and rotates the gateway token without stopping the gateway", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { newest } = yield* oldestAndNewest
          const agentId = yield* running(newest)
          yield* engine.relaunchScripts(agentId)
          yield* engine.rotateGatewayToken(agentId, token())
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "running", version: newest })
        }), timeout)

      it.effect("destroys an agent for good, and destroying it again is harmless", () =>
        Effect.gen(function*() {
          const engine = yield* AgentEngine
          const { oldest } = yield* oldestAndNewest
          const agentId = yield* running(oldest)
          yield* engine.destroy(agentId)
          assert.deepInclude(yield* Effect.flip(engine.status(agentId)), { _tag: "AgentNotProvisioned", agentId })
          assert.deepInclude(yield* Effect.flip(drive(engine.start(agentId))), { _tag: "AgentNotProvisioned", agentId })
          yield* engine.destroy(agentId)
          yield* engine.destroy(freshAgent("never"))
          yield* engine.provision(agentId, { version: oldest, gatewayToken: token() })
          assert.deepStrictEqual(yield* engine.status(agentId), { state: "stopped", version: oldest }, "a new agent")
        }), timeout)
    }))
}
