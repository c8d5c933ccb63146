/**
 * The AgentEngine contract for runtime config operations (see ContractSection.ts): read with a hash, write with
 * that hash, stale hashes refused, the engine's own validation, settings the adapter owns kept, credentials redacted
 * and kept when the marker comes back. Each holds while the agent is stopped (its file) and while it runs (its
 * gateway). The config is OpenClaw's shape (`gateway.port`, `gateway.auth.token`, `logging.level`), which the
 * simulated engine imitates.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { AgentEngine } from "../AgentEngine.ts"
import { type EngineConfig, RedactedMarker } from "../WorkspaceOperations.ts"
import type { SectionContext } from "./ContractSection.ts"

type Json = Record<string, unknown>

const record = (value: unknown): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {})
const gatewayOf = (config: Json) => record(config["gateway"])
const loggingLevel = (config: Json) => record(config["logging"])["level"]

/** `config` with `logging.level` set to the other of two valid levels than it has: a change any engine accepts. */
const withOtherLevel = (config: Json) => {
  const level = loggingLevel(config) === "debug" ? "info" : "debug"
  return { config: { ...config, logging: { ...record(config["logging"]), level } }, level }
}

/** The config with `gateway.port` set to `port`. */
const withPort = (config: Json, port: unknown) => ({ ...config, gateway: { ...gatewayOf(config), port } })

export const configContract = <R>({ it, freshAgent, aRunningAgent, timeout }: SectionContext<R>): void => {
  /** The observable promises of reads and writes, on an agent in whichever state the case put it. */
  const readsAndWrites = (agentId: string) =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const first = yield* engine.readConfig(agentId)
      assert.isString(first.hash)
      assert.isNotEmpty(first.hash)
      assert.isNumber(gatewayOf(first.config)["port"], "the config has the gateway's port")
      assert.strictEqual(record(gatewayOf(first.config)["auth"])["token"], RedactedMarker, "the gateway token is redacted")
      assert.strictEqual((yield* engine.readConfig(agentId)).hash, first.hash, "an unchanged config keeps its hash")

      // The whole config goes back: the redacted token with it (kept), the owned port left out (filled back in).
      const { config: changed, level } = withOtherLevel(first.config)
      const { port: _port, ...gatewayWithoutPort } = gatewayOf(changed)
      const written = yield* engine.writeConfig(agentId, { config: { ...changed, gateway: gatewayWithoutPort }, baseHash: first.hash })
      assert.notStrictEqual(written.hash, first.hash, "a written config has a new hash")
      assert.strictEqual(loggingLevel(written.config), level)
      const after: EngineConfig = yield* engine.readConfig(agentId)
      assert.strictEqual(after.hash, written.hash, "a read after the write shows the written version")
      assert.strictEqual(loggingLevel(after.config), level)
      assert.strictEqual(gatewayOf(after.config)["port"], gatewayOf(first.config)["port"], "an owned setting left out is kept")
      assert.strictEqual(record(gatewayOf(after.config)["auth"])["token"], RedactedMarker)

      // The hash read first is stale now.
      const stale = yield* Effect.flip(engine.writeConfig(agentId, { config: withOtherLevel(after.config).config, baseHash: first.hash }))
      assert.deepInclude(stale, { _tag: "ConfigChanged", agentId })

      // Settings the adapter owns cannot change; nothing is written.
      const port = gatewayOf(after.config)["port"] as number
      const owned = yield* Effect.flip(engine.writeConfig(agentId, { config: withPort(after.config, port + 1), baseHash: after.hash }))
      assert.strictEqual(owned._tag, "ConfigSettingOwned")
      if (owned._tag === "ConfigSettingOwned") assert.include(owned.paths, "gateway.port")
      const tokenChange = {
        ...after.config,
        gateway: { ...gatewayOf(after.config), auth: { ...record(gatewayOf(after.config)["auth"]), token: "a-token-of-the-users" } }
      }
      const ownedToken = yield* Effect.flip(engine.writeConfig(agentId, { config: tokenChange, baseHash: after.hash }))
      assert.strictEqual(ownedToken._tag, "ConfigSettingOwned")
      if (ownedToken._tag === "ConfigSettingOwned") assert.include(ownedToken.paths, "gateway.auth.token")

      // The engine's validator refuses an unknown top-level key, for the whole document; nothing is written.
      const invalid = yield* Effect.flip(engine.writeConfig(agentId, { config: { ...after.config, bogusKey: 1 }, baseHash: after.hash }))
      assert.strictEqual(invalid._tag, "ConfigRejected")
      if (invalid._tag === "ConfigRejected") {
        assert.isTrue(invalid.issues.some((issue) => issue.path === "<root>" && issue.message.includes("bogusKey")), JSON.stringify(invalid.issues))
      }
      assert.strictEqual((yield* engine.readConfig(agentId)).hash, after.hash, "refused writes changed the config")

      // Without a base hash, a write replaces whatever is there.
      const other = withOtherLevel(after.config)
      const unconditional = yield* engine.writeConfig(agentId, { config: other.config })
      assert.notStrictEqual(unconditional.hash, after.hash)
      assert.strictEqual(loggingLevel(unconditional.config), other.level)
      assert.strictEqual((yield* engine.readConfig(agentId)).hash, unconditional.hash)
    })

  it.effect("reads and writes the runtime config of a stopped agent, with hashes, owned settings and redaction", () =>
    Effect.flatMap(freshAgent, readsAndWrites), timeout)

  it.effect("reads and writes the runtime config of a running agent, which keeps running with the same token", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* aRunningAgent
      yield* readsAndWrites(agentId)
      assert.strictEqual((yield* engine.status(agentId)).state, "running")
      // The gateway still takes the adapter's token: the redacted one written back was kept.
      yield* engine.readConfig(agentId)
    }), timeout)

  it.effect("validates a candidate config with the engine's own validator, writing nothing", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = yield* freshAgent
      const current = yield* engine.readConfig(agentId)
      const valid = yield* engine.validateConfig(agentId, withOtherLevel(current.config).config)
      assert.deepInclude(valid, { valid: true, issues: [] })
      assert.isString(valid.output)

      const invalid = yield* engine.validateConfig(agentId, { ...withPort(current.config, "18789"), bogusKey: 1 })
      assert.isFalse(invalid.valid)
      const paths = invalid.issues.map((issue) => issue.path)
      assert.include(paths, "gateway.port", JSON.stringify(invalid.issues))
      assert.include(paths, "<root>", JSON.stringify(invalid.issues))
      assert.isNotEmpty(invalid.output)
      assert.strictEqual((yield* engine.readConfig(agentId)).hash, current.hash, "validation wrote the config")
    }), timeout)

  it.effect("knows no config of an agent that was never provisioned", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const agentId = `never-${Date.now().toString(36)}`
      const errors = yield* Effect.all([
        Effect.flip(engine.readConfig(agentId)),
        Effect.flip(engine.writeConfig(agentId, { config: {} })),
        Effect.flip(engine.validateConfig(agentId, {}))
      ])
      for (const error of errors) assert.deepInclude(error, { _tag: "AgentNotProvisioned", agentId })
    }), timeout)
}
