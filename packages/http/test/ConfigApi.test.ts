/**
 * An agent's runtime config (`GET|PUT /v0/agents/{agentId}/config`, `POST …/config/validate`) through the real routes
 * on the simulated engine, whose config imitates OpenClaw's (`gateway.port`, a redacted `gateway.auth.token`,
 * `logging.level`; unknown top-level keys refused): every documented status and string, gateway-token access, and
 * the audit trail, which names the settings a write changed and never their values.
 */
import { RedactedMarker } from "@cairn/agent-engine"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { web, request, workspace, key, control, dispose } = TestRuntime.makeTestApi()

const { expectError } = ApiKit
const { newAgent: newAgentOf } = ApiKit.make(request)

/** A request whose body is sent exactly as given (not JSON-encoded). */
const raw = async (method: string, path: string, token: string, body: string): Promise<TestRuntime.Reply> =>
  TestRuntime.replyOf(await web.handler(new Request(`http://cairn${path}`, { method, headers: { authorization: `Bearer ${token}` }, body })))

type Json = Record<string, any>
const withLevel = (config: Json, level: string) => ({ ...config, logging: { ...config["logging"], level } })
const otherLevel = (config: Json) => config["logging"]?.["level"] === "debug" ? "info" : "debug"

let owner: string
let agentId: string
const path = (id = agentId) => `/v0/agents/${id}/config`
const read = (token = owner, id = agentId) => request("GET", path(id), token)
const events = async (id = agentId) => (await request("GET", `/v0/agents/${id}/events`, owner)).body!["events"] as Array<Json>
const configEvents = async (id = agentId) => (await events(id)).filter((e) => e["type"] === "RuntimeConfigWritten")

const newAgent = (name: string) => newAgentOf(owner, name)

beforeAll(async () => {
  owner = (await key(await workspace(20))).token
  agentId = await newAgent("configured")
}, 120_000)

afterAll(dispose)

describe("reading the config", () => {
  it("answers {config, hash}, the gateway token redacted as the engine redacts it", async () => {
    const got = await read()
    assert.strictEqual(got.status, 200, JSON.stringify(got.body))
    assert.deepStrictEqual(Object.keys(got.body!).sort(), ["config", "hash"])
    assert.isString(got.body!["hash"])
    assert.isNotEmpty(got.body!["hash"])
    assert.isNumber(got.body!["config"].gateway.port)
    assert.strictEqual(got.body!["config"].gateway.auth.token, RedactedMarker)
    const gatewayToken = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.notInclude(JSON.stringify(got.body), gatewayToken)
    assert.strictEqual((await read()).body!["hash"], got.body!["hash"], "an unchanged config keeps its hash")
  })
})

describe("writing the config", () => {
  it("applies a change with the hash it was read at, answers the new config and hash, and records which settings changed", async () => {
    const before = (await read()).body!
    const level = otherLevel(before["config"])
    const written = await request("PUT", path(), owner, { config: withLevel(before["config"], level), baseHash: before["hash"] })
    assert.strictEqual(written.status, 200, JSON.stringify(written.body))
    assert.deepStrictEqual(Object.keys(written.body!).sort(), ["config", "hash", "success"])
    assert.strictEqual(written.body!["success"], true)
    assert.notStrictEqual(written.body!["hash"], before["hash"])
    assert.strictEqual(written.body!["config"].logging.level, level)
    assert.strictEqual(written.body!["config"].gateway.auth.token, RedactedMarker, "the redacted token written back is kept, still redacted")
    const after = (await read()).body!
    assert.strictEqual(after["hash"], written.body!["hash"])
    assert.strictEqual(after["config"].logging.level, level)

    const recorded = (await configEvents()).at(-1)!
    assert.strictEqual(recorded["actor"], "ada")
    assert.strictEqual(recorded["stream"], `agentconfig-${agentId}`)
    assert.deepStrictEqual(recorded["data"], {
      _tag: "RuntimeConfigWritten",
      agentId,
      workspaceId: recorded["data"].workspaceId,
      changedPaths: ["logging"],
      previousHash: before["hash"],
      hash: written.body!["hash"],
      at: recorded["data"].at
    })
  })

  it("takes the config as a JSON string too, and a write without a base hash replaces whatever is there", async () => {
    const current = (await read()).body!
    const asString = await request("PUT", path(), owner, { config: JSON.stringify(withLevel(current["config"], otherLevel(current["config"]))) })
    assert.strictEqual(asString.status, 200, JSON.stringify(asString.body))
    assert.strictEqual(asString.body!["config"].logging.level, otherLevel(current["config"]))
  })

  it("records no event for a write that changed nothing", async () => {
    const current = (await read()).body!
    const before = (await configEvents()).length
    const same = await request("PUT", path(), owner, { config: current["config"], baseHash: current["hash"] })
    assert.strictEqual(same.status, 200, JSON.stringify(same.body))
    assert.strictEqual(same.body!["hash"], current["hash"], "the same document has the same hash")
    assert.strictEqual((await configEvents()).length, before)
  })

  it("never records a value: a new credential shows as the path that changed", async () => {
    const current = (await read()).body!
    const secret = "sk-config-value-9f8e7d6c5b4a"
    const written = await request("PUT", path(), owner, {
      config: { ...current["config"], env: { vars: { OPENROUTER_API_KEY: secret } } },
      baseHash: current["hash"]
    })
    assert.strictEqual(written.status, 200, JSON.stringify(written.body))
    const trail = JSON.stringify(await events())
    assert.notInclude(trail, secret)
    assert.deepStrictEqual((await configEvents()).at(-1)!["data"].changedPaths, ["env"])
  })

  it("400 Invalid JSON: a body that is not JSON, no config, a config that is no object nor a string holding one", async () => {
    const before = (await read()).body!["hash"]
    expectError(await raw("PUT", path(), owner, "this is not json"), 400, "Invalid JSON")
    expectError(await raw("PUT", path(), owner, ""), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, {}), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: null }), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: [1, 2] }), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: 42 }), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: "{not json" }), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: "[1]" }), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, [{ config: {} }]), 400, "Invalid JSON")
    expectError(await request("PUT", path(), owner, { config: {}, baseHash: 7 }), 400, "Validation failed: baseHash must be a non-empty string")
    assert.strictEqual((await read()).body!["hash"], before, "a refused write changed the config")
  })

  it("400 Invalid config with the engine's issues, and nothing written", async () => {
    const current = (await read()).body!
    const refused = await request("PUT", path(), owner, { config: { ...current["config"], bogusKey: 1 }, baseHash: current["hash"] })
    expectError(refused, 400, "Invalid config", { issues: [{ path: "<root>", message: 'Unrecognized key: "bogusKey"' }] })
    assert.deepStrictEqual(Object.keys(refused.body!).sort(), ["error", "issues"])
    const issues = refused.body!["issues"] as Array<{ path: string; message: string }>
    assert.isTrue(issues.some((issue) => issue.path === "<root>" && issue.message.includes("bogusKey")), JSON.stringify(issues))
    for (const issue of issues) assert.deepStrictEqual(Object.keys(issue).sort(), ["message", "path"])
    assert.strictEqual((await read()).body!["hash"], current["hash"])
  })

  it("409 Config changed since it was read, for a stale base hash", async () => {
    const first = (await read()).body!
    const moved = await request("PUT", path(), owner, { config: withLevel(first["config"], otherLevel(first["config"])), baseHash: first["hash"] })
    assert.strictEqual(moved.status, 200, JSON.stringify(moved.body))
    const stale = await request("PUT", path(), owner, { config: first["config"], baseHash: first["hash"] })
    expectError(stale, 409, "Config changed since it was read")
    assert.strictEqual((await read()).body!["hash"], moved.body!["hash"])
  })

  it("400 naming the settings Cairn manages, for a changed gateway port or token", async () => {
    const current = (await read()).body!
    const config = current["config"]
    const port = await request("PUT", path(), owner, {
      config: { ...config, gateway: { ...config.gateway, port: config.gateway.port + 1 } },
      baseHash: current["hash"]
    })
    assert.strictEqual(port.status, 400, JSON.stringify(port.body))
    assert.match(port.body!["error"], /^Settings managed by Cairn cannot be changed: .*gateway\.port/)
    assert.include(port.body!["paths"], "gateway.port")
    const token = await request("PUT", path(), owner, {
      config: { ...config, gateway: { ...config.gateway, auth: { ...config.gateway.auth, token: "mine" } } },
      baseHash: current["hash"]
    })
    assert.strictEqual(token.status, 400, JSON.stringify(token.body))
    assert.include(token.body!["paths"], "gateway.auth.token")
    assert.strictEqual((await read()).body!["hash"], current["hash"])
  })
})

describe("validating a config", () => {
  const validate = (body: unknown, token = owner, id = agentId) => request("POST", `${path(id)}/validate`, token, body)

  it("answers {valid, issues, output} with the engine's verdict, for a JSON string or an object, and writes nothing", async () => {
    const current = (await read()).body!
    const good = withLevel(current["config"], otherLevel(current["config"]))
    for (const config of [JSON.stringify(good), good]) {
      const valid = await validate({ config })
      assert.strictEqual(valid.status, 200, JSON.stringify(valid.body))
      assert.deepStrictEqual(Object.keys(valid.body!).sort(), ["issues", "output", "valid"])
      assert.strictEqual(valid.body!["valid"], true)
      assert.deepStrictEqual(valid.body!["issues"], [])
      assert.isString(valid.body!["output"])
    }
    const invalid = await validate({ config: JSON.stringify({ ...current["config"], gateway: { ...current["config"].gateway, port: "18789" }, bogusKey: 1 }) })
    assert.strictEqual(invalid.status, 200, JSON.stringify(invalid.body))
    assert.strictEqual(invalid.body!["valid"], false)
    const paths = (invalid.body!["issues"] as Array<{ path: string }>).map((issue) => issue.path)
    assert.include(paths, "gateway.port")
    assert.include(paths, "<root>")
    assert.isNotEmpty(invalid.body!["output"])
    assert.strictEqual((await read()).body!["hash"], current["hash"], "validation changed the config")
  })

  it("400 Invalid JSON for a config string that does not parse, a missing config, or a body that is not JSON at all", async () => {
    expectError(await validate({ config: "{\"gateway\": " }), 400, "Invalid JSON")
    expectError(await validate({ config: "" }), 400, "Invalid JSON")
    expectError(await validate({}), 400, "Invalid JSON")
    expectError(await validate({ config: [1] }), 400, "Invalid JSON")
    expectError(await raw("POST", `${path()}/validate`, owner, "{config: nope"), 400, "Invalid JSON")
    expectError(await raw("POST", `${path()}/validate`, owner, ""), 400, "Invalid JSON")
  })
})

describe("who may use an agent's config", () => {
  it("the agent's gateway token, as a bearer token or ?token=; a rotated one, another agent's, or none is 401", async () => {
    const token = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    const got = await read(token)
    assert.strictEqual(got.status, 200, JSON.stringify(got.body))
    const viaQuery = await web.handler(new Request(`http://cairn${path()}?token=${token}`))
    assert.strictEqual(viaQuery.status, 200)
    const byAgent = await request("PUT", path(), token, { config: withLevel(got.body!["config"], otherLevel(got.body!["config"])) })
    assert.strictEqual(byAgent.status, 200, JSON.stringify(byAgent.body))
    assert.strictEqual((await configEvents()).at(-1)!["actor"], "ada", "a gateway token acts for the agent's owner")
    const validated = await request("POST", `${path()}/validate`, token, { config: "{}" })
    assert.strictEqual(validated.status, 200, JSON.stringify(validated.body))

    const other = await newAgent("neighbour")
    const otherToken = (await request("GET", `/v0/agents/${other}/gateway-token`, owner)).body!["gatewayToken"] as string
    expectError(await read(otherToken), 401, "Unauthorized", { reason: "stale-gateway-token" })
    expectError(await request("PUT", path(), otherToken, { config: {} }), 401, "Unauthorized", { reason: "stale-gateway-token" })
    expectError(await request("GET", path()), 401, "Unauthorized", { reason: "missing-credentials" })
    expectError(await request("POST", `${path()}/validate`, undefined, { config: "{}" }), 401, "Unauthorized", { reason: "missing-credentials" })

    const rotated = (await request("POST", `/v0/agents/${other}/gateway-token/rotate`, owner)).body!["gatewayToken"] as string
    expectError(await read(otherToken, other), 401, "Unauthorized", { reason: "stale-gateway-token" })
    assert.strictEqual((await read(rotated, other)).status, 200)
  })

  it("404 Agent not found for an unknown agent, another workspace's, or a deleted one", async () => {
    expectError(await read(owner, "nosuchagent"), 404, "Agent not found")
    expectError(await request("PUT", path("nosuchagent"), owner, { config: {} }), 404, "Agent not found")
    expectError(await request("POST", `${path("nosuchagent")}/validate`, owner, { config: {} }), 404, "Agent not found")
    const stranger = (await key(await workspace(1))).token
    expectError(await read(stranger), 404, "Agent not found")
    expectError(await request("PUT", path(), stranger, { config: {} }), 404, "Agent not found")
    const gone = await newAgent("short-lived")
    assert.strictEqual((await request("DELETE", `/v0/agents/${gone}`, owner)).status, 200)
    expectError(await read(owner, gone), 404, "Agent not found")
  })
})

describe("engine failures: 500 with the documented string, the engine's words only in the log", () => {
  it("Failed to read config, Failed to write config, Validation command failed; nothing written or recorded", async () => {
    const id = await newAgent("failing")
    const current = (await read(owner, id)).body!
    const change = { config: withLevel(current["config"], otherLevel(current["config"])), baseHash: current["hash"] }
    const detail = "disk on fire 7d1c"
    try {
      await control((c) => c.failConfig(id, "read", detail))
      const unreadable = await read(owner, id)
      assert.strictEqual(unreadable.status, 500)
      assert.deepStrictEqual(unreadable.body, { error: "Failed to read config" })
      // A write needs the stored config too (to keep redacted credentials): it cannot be written either.
      const blind = await request("PUT", path(id), owner, change)
      assert.strictEqual(blind.status, 500)
      assert.deepStrictEqual(blind.body, { error: "Failed to write config" })
      await control((c) => c.clearFailures(id))

      await control((c) => c.failConfig(id, "write", detail))
      const unwritable = await request("PUT", path(id), owner, change)
      assert.strictEqual(unwritable.status, 500)
      assert.deepStrictEqual(unwritable.body, { error: "Failed to write config" })
      assert.strictEqual((await read(owner, id)).body!["hash"], current["hash"])
      await control((c) => c.clearFailures(id))

      await control((c) => c.failConfig(id, "validate", detail))
      const validator = await request("POST", `${path(id)}/validate`, owner, { config: "{}" })
      assert.strictEqual(validator.status, 500)
      assert.deepStrictEqual(validator.body, { error: "Validation command failed" })
      // A body that is not JSON is refused before the validator is asked.
      expectError(await request("POST", `${path(id)}/validate`, owner, { config: "{" }), 400, "Invalid JSON")
    } finally {
      await control((c) => c.clearFailures(id))
    }
    assert.deepStrictEqual(await configEvents(id), [])
    const written = await request("PUT", path(id), owner, change)
    assert.strictEqual(written.status, 200, JSON.stringify(written.body))
    assert.strictEqual((await configEvents(id)).length, 1)
  })
})
