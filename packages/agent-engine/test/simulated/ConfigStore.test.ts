import { assert, describe, it } from "@effect/vitest"
import { RedactedMarker } from "../../src/WorkspaceOperations.ts"
import * as _ from "../../src/simulated/ConfigStore.ts"

const initial = _.initial({ home: "/simulated/agents/a", port: 19001, token: "the-token" })

/** The gateway settings Cairn owns, as the real adapter writes them (decision 0046 added the agent host's). */
const ownedGateway = {
  mode: "local",
  bind: "loopback",
  auth: { mode: "token", token: "the-token" },
  http: { endpoints: { chatCompletions: { enabled: true }, responses: { enabled: true } } },
  trustedProxies: ["127.0.0.1", "::1"]
}

describe("ConfigStore", () => {
  it("starts as the real adapter's offline config, with the token held as a value", () => {
    assert.deepStrictEqual(initial.config, {
      gateway: { ...ownedGateway, port: 19001 },
      update: { checkOnStart: false },
      telemetry: { enabled: false },
      discovery: { mdns: { mode: "off" } },
      models: { catalogRefresh: { enabled: false } },
      logging: { file: "/simulated/agents/a/.openclaw/logs/gateway.log" }
    })
    assert.strictEqual(initial.text, `${JSON.stringify(initial.config, null, 2)}\n`)
  })

  it("hashes the stored text: the same document the same hash, any change another", () => {
    assert.match(initial.hash, /^sha256:[0-9a-f]{64}$/)
    assert.strictEqual(_.store(JSON.parse(initial.text)).hash, initial.hash)
    assert.notStrictEqual(_.store({ ...initial.config, cron: {} }).hash, initial.hash)
    assert.notStrictEqual(_.withToken(initial, "other").hash, initial.hash)
    assert.strictEqual((_.withToken(initial, "other").config["gateway"] as any).auth.token, "other")
  })

  it("redacts concrete credentials as OpenClaw does, leaving ${VAR} references and look-alikes", () => {
    const redacted = _.redact({
      ...initial.config,
      channels: { telegram: { botToken: "123:abc", accounts: [{ apiKey: "k" }] } },
      env: { OPENAI_API_KEY: "${OPENAI_API_KEY}" },
      agents: { defaults: { maxTokens: 100, contextTokens: 5 } }
    })
    assert.strictEqual((redacted["gateway"] as any).auth.token, RedactedMarker)
    assert.deepStrictEqual(redacted["channels"], { telegram: { botToken: RedactedMarker, accounts: [{ apiKey: RedactedMarker }] } })
    assert.deepStrictEqual(redacted["env"], { OPENAI_API_KEY: "${OPENAI_API_KEY}" })
    assert.deepStrictEqual(redacted["agents"], { defaults: { maxTokens: 100, contextTokens: 5 } })
    assert.strictEqual((redacted["gateway"] as any).port, 19001)
  })

  it("puts the stored credential back where the marker returns, and refuses a marker standing for nothing", () => {
    const { config, issues } = _.restore(_.redact(initial.config), initial.config)
    assert.deepStrictEqual(issues, [])
    assert.deepStrictEqual(config, initial.config)
    const orphan = _.restore({ channels: { slack: { botToken: RedactedMarker } }, logging: { file: RedactedMarker } }, initial.config)
    assert.deepStrictEqual(orphan.issues, [
      { path: "channels.slack.botToken", message: `Sentinel value "${RedactedMarker}" in key channels.slack.botToken is not valid as real data` },
      { path: "logging.file", message: `Reserved redaction sentinel "${RedactedMarker}" is not valid config data (logging.file).` }
    ])
  })

  it("fills the settings Cairn owns back in when left out, and names those changed", () => {
    const left = _.keepOwned({ logging: { level: "debug" } }, initial.config)
    assert.deepStrictEqual(left.changed, [])
    assert.deepStrictEqual(left.config, {
      logging: { level: "debug", file: "/simulated/agents/a/.openclaw/logs/gateway.log" },
      gateway: { ...ownedGateway, port: 19001 }
    })
    const changed = _.keepOwned(
      { gateway: { port: 1, bind: "lan", mode: "remote", auth: { mode: "none", token: "mine" } }, logging: { file: "/tmp/x" } },
      initial.config
    )
    assert.deepStrictEqual(changed.changed, [
      "gateway.mode",
      "gateway.port",
      "gateway.bind",
      "gateway.auth.mode",
      "gateway.auth.token",
      "logging.file"
    ])
    assert.deepStrictEqual(_.keepOwned({ gateway: { mode: "local" } }, initial.config).changed, [], "an unchanged setting given is fine")
    assert.deepStrictEqual(_.keepOwned({ gateway: "lan" }, initial.config), {
      config: { gateway: "lan", logging: { file: "/simulated/agents/a/.openclaw/logs/gateway.log" } },
      changed: []
    }, "a gateway that is no object is left to the validator")
  })

  it("classifies paths as OpenClaw's isSensitiveConfigPath does", () => {
    for (const path of ["gateway.auth.token", "gateway.auth.password", "x.apiKey", "x.api_key", "x.clientSecret", "localService.env.FOO"]) {
      assert.isTrue(_.isSensitivePath(path), path)
    }
    for (const path of ["gateway.port", "agents.defaults.maxTokens", "x.passwordFile", "x.tokens"]) assert.isFalse(_.isSensitivePath(path), path)
  })
})
