/**
 * The runtime config's own logic, without an engine: redaction by OpenClaw's path rule, markers restored, owned
 * settings, the validator's answers, the write path's mapping of the gateway's refusals (through a stand-in
 * ConfigTarget), and AgentHome keeping a user's config across provisions. The contract (ConfigContract.ts) runs
 * the whole of it on the stand-in engine and on real gateways.
 */
import { RedactedMarker } from "@cairn/agent-engine"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import JSON5 from "json5"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as AgentHome from "../src/AgentHome.ts"
import { GatewayRpcError } from "../src/GatewayRpc.ts"
import * as RuntimeConfig from "../src/RuntimeConfig.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-runtime-config-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let homes = 0
const newHome = () => {
  // Under `agents/`, as the engine lays homes out: Cairn's folder for each goes beside them (AgentHome.metaDirOf).
  const home = Path.join(root, "agents", `home-${homes++}`)
  Fs.mkdirSync(Path.join(home, ".openclaw"), { recursive: true })
  return home
}

/** The gateway settings Cairn owns (AgentHome.ownedSettings), without an agent host's origins. */
const ownedGateway = {
  mode: "local",
  bind: "loopback",
  auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" },
  http: { endpoints: { chatCompletions: { enabled: true }, responses: { enabled: true } } },
  trustedProxies: ["127.0.0.1", "::1"]
}

describe("RuntimeConfig", () => {
  it("hashes the file's text: equal texts, equal hashes", () => {
    assert.strictEqual(RuntimeConfig.hashText("{}\n"), RuntimeConfig.hashText("{}\n"))
    assert.notStrictEqual(RuntimeConfig.hashText("{}\n"), RuntimeConfig.hashText("{} \n"))
    assert.match(RuntimeConfig.hashText(""), /^sha256:[0-9a-f]{64}$/)
  })

  it("redacts credentials by OpenClaw's path rule, and the gateway token always", () => {
    const config = {
      gateway: { port: 18789, auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" } },
      channels: { telegram: { botToken: "123:abc", enabled: true }, slack: { appToken: "", botToken: "${SLACK_BOT_TOKEN}" } },
      models: {
        providers: {
          openai: { apiKey: "sk-live", baseUrl: "https://api.example", maxTokens: 2048, models: [{ id: "m", contextTokens: 8 }] }
        }
      },
      secrets: { providers: { vault: { password: { source: "env", provider: "default", id: "VAULT_PASSWORD" } } } },
      tools: { web: { apiKeys: ["k1", "${K2}"] } },
      logging: { level: "debug" }
    }
    const redacted = RuntimeConfig.redact(config)
    assert.deepStrictEqual(redacted, {
      gateway: { port: 18789, auth: { mode: "token", token: RedactedMarker } },
      channels: { telegram: { botToken: RedactedMarker, enabled: true }, slack: { appToken: "", botToken: "${SLACK_BOT_TOKEN}" } },
      models: {
        providers: {
          openai: { apiKey: RedactedMarker, baseUrl: "https://api.example", maxTokens: 2048, models: [{ id: "m", contextTokens: 8 }] }
        }
      },
      secrets: { providers: { vault: { password: { source: "env", provider: "default", id: RedactedMarker } } } },
      tools: { web: { apiKeys: [RedactedMarker, "${K2}"] } },
      logging: { level: "debug" }
    })
    assert.strictEqual(config.channels.telegram.botToken, "123:abc", "the input is left as it was")
  })

  it("restores markers from the stored config, and lists markers with nothing stored behind them", () => {
    const stored = { channels: { telegram: { botToken: "123:abc" } }, list: ["a", "secret-b"] }
    const candidate = { channels: { telegram: { botToken: RedactedMarker, enabled: true } }, list: ["a", RedactedMarker], other: RedactedMarker }
    const { config, missing } = RuntimeConfig.restoreRedacted(candidate, stored)
    assert.deepStrictEqual(config, { channels: { telegram: { botToken: "123:abc", enabled: true } }, list: ["a", "secret-b"], other: undefined })
    assert.deepStrictEqual(missing, ["other"])
  })

  it("fills in the owned settings a candidate leaves out, and lists those it changes", () => {
    const home = "/data/agents/a"
    const kept = RuntimeConfig.applyOwnedSettings({ logging: { level: "debug" } }, home, 18909)
    assert.deepStrictEqual(kept.changed, [])
    assert.deepStrictEqual(kept.config, {
      logging: { level: "debug", file: AgentHome.logPath(home) },
      gateway: { ...ownedGateway, port: 18909 }
    })
    const changed = RuntimeConfig.applyOwnedSettings(
      { gateway: { port: 1, bind: "lan", mode: "local", auth: { token: "mine" } }, logging: { file: "/tmp/elsewhere.log" } },
      home,
      18909
    )
    assert.deepStrictEqual(changed.changed, ["gateway.port", "gateway.bind", "gateway.auth.token", "logging.file"])
  })

  it("owns the agent's host settings: the OpenAI-compatible endpoints, loopback proxies, the host's origins", () => {
    const home = "/data/agents/a"
    const origins = AgentHome.agentHostOrigins("Ab12", "Agents.Example.com.", [3000])
    assert.deepStrictEqual(origins, [
      "https://ab12.agents.example.com",
      "http://ab12.agents.example.com",
      "https://ab12.agents.example.com:3000",
      "http://ab12.agents.example.com:3000"
    ])
    assert.deepStrictEqual(AgentHome.agentHostOrigins("ab12", undefined), [])
    const applied = RuntimeConfig.applyOwnedSettings({ gateway: { controlUi: { basePath: "/ui" } } }, home, 18909, origins)
    assert.deepStrictEqual(applied.changed, [])
    assert.deepStrictEqual((applied.config as any).gateway.controlUi, { basePath: "/ui", allowedOrigins: origins })
    const widened = RuntimeConfig.applyOwnedSettings(
      { gateway: { controlUi: { allowedOrigins: ["*"] }, http: { endpoints: { chatCompletions: { enabled: false } } } } },
      home,
      18909,
      origins
    )
    assert.deepStrictEqual(widened.changed, ["gateway.http.endpoints.chatCompletions.enabled", "gateway.controlUi.allowedOrigins"])
  })

  it("publishes the agent's host as the gateway's publicOrigin over https, except on a development domain", () => {
    const home = "/data/agents/a"
    const origins = AgentHome.agentHostOrigins("Ab12", "agents.example.com", [3000])
    assert.strictEqual(AgentHome.agentPublicOrigin(origins), "https://ab12.agents.example.com")
    assert.strictEqual((AgentHome.offlineConfig(home, 18909, origins) as any).gateway.publicOrigin, "https://ab12.agents.example.com")
    // A user's own origin is Cairn's to set: put back, and named as changed.
    const mine = RuntimeConfig.applyOwnedSettings({ gateway: { publicOrigin: "https://elsewhere.example.net" } }, home, 18909, origins)
    assert.strictEqual((mine.config as any).gateway.publicOrigin, "https://ab12.agents.example.com")
    assert.include(mine.changed, "gateway.publicOrigin")
    // Development: plain http on *.localhost, which OpenClaw does not take as a public origin.
    for (const domain of ["agents.localhost", "localhost"]) {
      const local = AgentHome.agentHostOrigins("ab12", domain, [3000])
      assert.isUndefined(AgentHome.agentPublicOrigin(local))
      assert.notProperty((AgentHome.offlineConfig(home, 18909, local) as any).gateway, "publicOrigin")
    }
    assert.isUndefined(AgentHome.agentPublicOrigin([]))
  })

  it("reads the validator's answers as OpenClaw prints them (reference features §3)", () => {
    assert.deepStrictEqual(RuntimeConfig.parseValidatorOutput(`{"valid":true,"path":"/x","warnings":[]}\n`), {
      valid: true,
      issues: [],
      output: "Config valid"
    })
    const withWarning = RuntimeConfig.parseValidatorOutput(
      `[plugins] a notice\n{"valid":true,"path":"/x","warnings":[{"path":"gateway.auth.token","message":"Missing env var \\"OPENCLAW_GATEWAY_TOKEN\\" - feature using this value will be unavailable"},{"path":"models.x","message":"Missing env var \\"X\\""}]}`
    )
    assert.deepStrictEqual(withWarning, { valid: true, issues: [], output: "Config valid\nwarning: models.x: Missing env var \"X\"" })
    const invalid = RuntimeConfig.parseValidatorOutput(JSON.stringify({
      ok: false,
      error: { type: "cli_error", message: "OpenClaw config is invalid: /x" },
      valid: false,
      path: "/x",
      issues: [
        { path: "gateway.port", message: "Invalid input: expected number, received string" },
        { path: "<root>", message: "Unrecognized key: \"bogusKey\"" }
      ]
    }, null, 2))
    assert.deepStrictEqual(invalid?.issues, [
      { path: "gateway.port", message: "Invalid input: expected number, received string" },
      { path: "<root>", message: "Unrecognized key: \"bogusKey\"" }
    ])
    assert.isFalse(invalid?.valid)
    assert.include(invalid?.output, "<root>: Unrecognized key")
    const missing = RuntimeConfig.parseValidatorOutput(`{"ok":false,"error":{"type":"cli_error","message":"file not found"},"valid":false,"path":"/x"}`)
    assert.deepStrictEqual(missing?.issues, [{ path: "<root>", message: "file not found" }])
    assert.isUndefined(RuntimeConfig.parseValidatorOutput("Error: cannot find module"))
  })

  describe("writes through a running gateway", () => {
    /** A running target whose gateway answers `config.get` from the file and `config.set` with `set`. */
    const runningTarget = (home: string, set: (params: { raw: string; baseHash: string }) => unknown) => {
      const calls: Array<{ method: string; params: unknown }> = []
      const target: RuntimeConfig.ConfigTarget = {
        agentId: "a",
        home,
        port: 18789,
        isRunning: () => true,
        rpc: (method, params) =>
          Effect.suspend(() => {
            calls.push({ method, params })
            if (method === "config.get") {
              const raw = Fs.readFileSync(AgentHome.configPath(home), "utf8")
              return Effect.succeed({ raw, parsed: RuntimeConfig.redact(JSON5.parse(raw)), hash: "engine-hash" })
            }
            try {
              return Effect.succeed(set(params as { raw: string; baseHash: string }))
            } catch (error) {
              return Effect.fail(error as GatewayRpcError)
            }
          }),
        runValidator: () => Effect.die("a write while running uses the gateway's validation")
      }
      return { target, calls }
    }
    const storedConfig = (home: string) => {
      const text = JSON.stringify({ ...AgentHome.offlineConfig(home, 18789), channels: { telegram: { botToken: "123:abc" } } })
      Fs.writeFileSync(AgentHome.configPath(home), text)
      return RuntimeConfig.hashText(text)
    }

    it.effect("sends the whole config with markers restored and the engine's own base hash", () =>
      Effect.gen(function*() {
        const home = newHome()
        const { target, calls } = runningTarget(home, (params) => {
          Fs.writeFileSync(AgentHome.configPath(home), params.raw)
          return { ok: true }
        })
        const hash = storedConfig(home)
        const read = yield* RuntimeConfig.read(target)
        assert.strictEqual(read.hash, hash)
        assert.deepInclude(read.config["channels"] as object, { telegram: { botToken: RedactedMarker } })
        const written = yield* RuntimeConfig.write(target, { config: { ...read.config, logging: { level: "debug" } }, baseHash: read.hash })
        const set = calls.find((call) => call.method === "config.set")?.params as { raw: string; baseHash: string }
        assert.strictEqual(set.baseHash, "engine-hash")
        const sent = JSON5.parse(set.raw)
        assert.strictEqual(sent.channels.telegram.botToken, "123:abc", "the stored credential is kept")
        assert.strictEqual(sent.gateway.auth.token, "${OPENCLAW_GATEWAY_TOKEN}")
        assert.strictEqual(sent.logging.file, AgentHome.logPath(home), "an owned setting left out is filled in")
        assert.strictEqual(written.hash, RuntimeConfig.hashText(set.raw))
        assert.notStrictEqual(written.hash, read.hash)
      }))

    it.effect("maps the gateway's refusals: issues, stale hash, rate limit", () =>
      Effect.gen(function*() {
        const home = newHome()
        const hash = storedConfig(home)
        const config = { logging: { level: "debug" } }
        const refusedWith = (error: GatewayRpcError) =>
          Effect.flip(RuntimeConfig.write(runningTarget(home, () => {
            throw error
          }).target, { config, baseHash: hash }))

        const invalid = yield* refusedWith(
          new GatewayRpcError("INVALID_REQUEST", "invalid config: …", {
            issues: [{ path: "", message: "Unrecognized key: \"bogusKey\"" }, { path: "gateway.port", message: "expected number" }]
          })
        )
        assert.deepInclude(invalid, {
          _tag: "ConfigRejected",
          issues: [{ path: "<root>", message: "Unrecognized key: \"bogusKey\"" }, { path: "gateway.port", message: "expected number" }]
        })
        const other = yield* refusedWith(new GatewayRpcError("INVALID_REQUEST", "config.set would remove existing agent entries: main"))
        assert.deepInclude(other, { _tag: "ConfigRejected" })
        const stale = yield* refusedWith(new GatewayRpcError("INVALID_REQUEST", "config changed since last load; re-run config.get and retry"))
        assert.deepInclude(stale, { _tag: "ConfigChanged", agentId: "a" })
        const limited = yield* refusedWith(new GatewayRpcError("UNAVAILABLE", "rate limit exceeded for config.set; retry after 20s", {}, 19_500))
        assert.deepInclude(limited, { _tag: "ConfigUnwritable" })
        assert.include((limited as { detail: string }).detail, "retry after 20 s")
        const gone = yield* refusedWith(new GatewayRpcError("CLOSED", "the gateway closed the connection"))
        assert.deepInclude(gone, { _tag: "ConfigUnwritable" })
      }))

    it.effect("refuses a stale base hash and owned changes before asking the gateway", () =>
      Effect.gen(function*() {
        const home = newHome()
        storedConfig(home)
        const { target, calls } = runningTarget(home, () => assert.fail("config.set was called"))
        const stale = yield* Effect.flip(RuntimeConfig.write(target, { config: {}, baseHash: "sha256:old" }))
        assert.deepInclude(stale, { _tag: "ConfigChanged" })
        const owned = yield* Effect.flip(RuntimeConfig.write(target, { config: { gateway: { port: 1, bind: "lan" } } }))
        assert.deepInclude(owned, { _tag: "ConfigSettingOwned", paths: ["gateway.port", "gateway.bind"] })
        const unknownMarker = yield* Effect.flip(RuntimeConfig.write(target, { config: { models: { apiKey: RedactedMarker } } }))
        assert.deepInclude(unknownMarker, { _tag: "ConfigRejected" })
        assert.deepStrictEqual(calls.map((call) => call.method), ["config.get", "config.get", "config.get"])
      }))
  })
})

describe("AgentHome.write", () => {
  it.effect("gives a new home the offline config, and keeps a user's settings on later provisions", () =>
    Effect.gen(function*() {
      const home = newHome()
      const meta = { version: "2026.9.6", slot: 0 }
      yield* AgentHome.write(home, AgentHome.metaDirOf(home), meta, 18789)
      const path = AgentHome.configPath(home)
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(path, "utf8")), AgentHome.offlineConfig(home, 18789))

      // The user's runtime config: settings of their own, an offline switch turned on, an owned one tampered with.
      const users = {
        ...AgentHome.offlineConfig(home, 18789),
        models: { catalogRefresh: { enabled: true } },
        agents: { defaults: { skipBootstrap: true } },
        gateway: { mode: "local", port: 1, bind: "lan", auth: { mode: "none" } }
      }
      Fs.writeFileSync(path, `// a comment\n${JSON.stringify(users)}`)
      yield* AgentHome.write(home, AgentHome.metaDirOf(home), { ...meta, slot: 1 }, 18909)
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(path, "utf8")), { ...users, gateway: { ...ownedGateway, port: 18909 } })
    }))

  it.effect("keeps an unreadable config aside and starts over with the offline config", () =>
    Effect.gen(function*() {
      const home = newHome()
      const path = AgentHome.configPath(home)
      Fs.writeFileSync(path, "{ not json5")
      yield* AgentHome.write(home, AgentHome.metaDirOf(home), { version: "2026.9.6", slot: 0 }, 18789)
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(path, "utf8")), AgentHome.offlineConfig(home, 18789))
      const aside = Fs.readdirSync(Path.dirname(path)).filter((name) => name.startsWith("openclaw.json.cairn-unreadable-"))
      assert.strictEqual(aside.length, 1)
      assert.strictEqual(Fs.readFileSync(Path.join(Path.dirname(path), aside[0]!), "utf8"), "{ not json5")
    }))
})
