/**
 * The agents control plane (/v0) through the real routes, on the simulated engine, with the documented error
 * contract walked row by row (service interface, sections 7.1 and 7.2).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { CrashBackoff, Gateway } from "@cairn/application"
import { TokenSigner } from "@cairn/auth"
import { JoseTokenSigner } from "@cairn/auth/node"
import { Agent } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"

// Fault injection around the real signer, for the one documented failure nothing else can provoke.
let platformTokensFail = false
const signer = Layer.effect(TokenSigner, Effect.gen(function*() {
  const real = yield* JoseTokenSigner.make(yield* JoseTokenSigner.generate)
  return TokenSigner.of({
    ...real,
    issuePlatformToken: (claims) => platformTokensFail ? Effect.die(new Error("signing key unavailable")) : real.issuePlatformToken(claims)
  })
}))

const { runtime, web, request, workspace: newWorkspace, key, control, dispose } = TestRuntime.makeTestApi({ signer })
const workspace = (agentLimit: number, internal = false) => newWorkspace(agentLimit, { internal })
/** Agent events as another node would record them. */
const encode = (event: Agent.AgentEvent, actor: string) => ({ type: event._tag, data: Schema.encodeSync(Agent.AgentEvent)(event), metadata: { actor } })
const { expectError } = ApiKit
const kit = ApiKit.make(request)
const { waitForStatus } = kit
/** `POST /v0/agents` with this name (any value, for the validation rows). */
const createAgent = (token: string, name: unknown = "helper") => kit.createAgent(token, { name })

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(50))).token
  const created = await createAgent(owner, "primary")
  assert.strictEqual(created.status, 201)
  // The test runtime runs the simulated engine, and agents say so rather than claiming OpenClaw.
  assert.strictEqual(created.body!["agent"].engine, "simulated")
  agentId = created.body!["agent"].agentId
}, 120_000)

afterAll(dispose)

describe("the /v0 error contract, row by row", () => {
  it("400 on create with a missing, over-long or banned-character name", async () => {
    expectError(await request("POST", "/v0/agents", owner, {}), 400, "Validation failed: name is required")
    expectError(await createAgent(owner, ""), 400, "Validation failed: name is required")
    expectError(await createAgent(owner, "x".repeat(101)), 400, "Validation failed: name must be at most 100 characters")
    expectError(await createAgent(owner, "<b>bold</b>"), 400, /^Validation failed: name contains a banned character/)
    expectError(await createAgent(owner, 42), 400, "Validation failed: name is required")
    expectError(await request("POST", "/v0/agents", owner, "not json at all" as unknown as object), 400, /^Validation failed: /)
  })

  it("401 on a missing header, an expired or revoked JWT, a rotated gateway token, another agent's token", async () => {
    expectError(await request("GET", "/v0/agents"), 401, "Unauthorized", { reason: "missing-credentials" })
    const workspaceId = await workspace(5)
    const expiring = await key(workspaceId, ["org:agents"], "ada", 1)
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expectError(await request("GET", "/v0/agents", expiring.token), 401, "Unauthorized", { reason: "expired" })
    const revoked = await key(workspaceId)
    assert.strictEqual((await request("GET", "/v0/agents", revoked.token)).status, 200)
    await request("POST", `/admin/keys/${revoked.keyId}/revoke`, "admin-secret")
    expectError(await request("GET", "/v0/agents", revoked.token), 401, "Unauthorized", { reason: "revoked" })
    const old = (await request("GET", `/v0/agents/${agentId}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}`, old)).status, 200)
    const rotated = await request("POST", `/v0/agents/${agentId}/gateway-token/rotate`, owner)
    assert.notStrictEqual(rotated.body!["gatewayToken"], old)
    expectError(await request("GET", `/v0/agents/${agentId}`, old), 401, "Unauthorized", { reason: "stale-gateway-token" })
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}`, rotated.body!["gatewayToken"])).status, 200)
    const other = (await createAgent((await key(workspaceId)).token, "theirs")).body!["agent"].agentId as string
    expectError(await request("GET", `/v0/agents/${other}`, rotated.body!["gatewayToken"]), 401, "Unauthorized", { reason: "stale-gateway-token" })
    // The same token also works as ?token= and as the gw_token cookie, and the rotated one does not.
    const current = rotated.body!["gatewayToken"] as string
    assert.strictEqual((await web.handler(new Request(`http://cairn/v0/agents/${agentId}?token=${current}`))).status, 200)
    assert.strictEqual((await web.handler(new Request(`http://cairn/v0/agents/${agentId}`, { headers: { cookie: `theme=dark; gw_token=${current}` } }))).status, 200)
    assert.strictEqual((await web.handler(new Request(`http://cairn/v0/agents/${agentId}`, { headers: { cookie: `gw_token=${old}` } }))).status, 401)
  })

  it("Missing userId for a key that names no user", async () => {
    const anonymous = await key(await workspace(5), ["org:agents"], "")
    expectError(await request("GET", "/v0/agents", anonymous.token), 401, "Missing userId")
  })

  it("403 when the agent limit is reached, and when the key lacks the agents scope", async () => {
    const limited = (await key(await workspace(1))).token
    assert.strictEqual((await createAgent(limited)).status, 201)
    expectError(await createAgent(limited), 403, "Agent limit reached")
    const filesOnly = (await key(await workspace(5), ["org:files:read"])).token
    expectError(await request("GET", "/v0/agents", filesOnly), 403, "Forbidden: this key lacks the org:agents scope")
  })

  it("404 for a wrong agentId or another workspace's agent, and for issues on a non-internal account", async () => {
    expectError(await request("GET", "/v0/agents/nosuchagent", owner), 404, "Agent not found")
    const stranger = (await key(await workspace(5))).token
    for (const path of [`/v0/agents/${agentId}`, `/v0/agents/${agentId}/devices`, `/v0/agents/${agentId}/events`, `/v0/agents/${agentId}/gateway-token`]) {
      expectError(await request("GET", path, stranger), 404, "Agent not found")
    }
    expectError(await request("POST", `/v0/agents/${agentId}/restart`, stranger, {}), 404, "Agent not found")
    expectError(await request("DELETE", `/v0/agents/${agentId}`, stranger), 404, "Agent not found")
    expectError(await request("GET", "/v0/issues", owner), 404, "Not found")
    expectError(await request("POST", "/v0/issues", owner, { title: "t" }), 404, "Not found")
  })

  it("400 Invalid version, 500 Restart failed, Script launch failed, CLI error, Token generation failed", async () => {
    expectError(await request("POST", `/v0/agents/${agentId}/restart`, owner, { version: "1999.1.1" }), 400, "Invalid version")
    // An older version than the agent runs is refused too (engine state migrates one way), and the agent runs on.
    const versions = await runtime.runPromise(AgentEngine.use((engine) => engine.listVersions))
    assert.isAbove(versions.length, 1)
    expectError(await request("POST", `/v0/agents/${agentId}/restart`, owner, { version: versions[0] }), 400, "Invalid version")
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}`, owner)).body!["agent"].status, "running")
    await control((c) => c.failNextStart(agentId, "boom: gateway exited"))
    expectError(await request("POST", `/v0/agents/${agentId}/restart`, owner, {}), 500, "Restart failed")
    await control((c) => c.failScripts(agentId, "build exited 1"))
    expectError(await request("POST", `/v0/agents/${agentId}/scripts/retry`, owner), 500, "Script launch failed")
    await control((c) => c.failCli(agentId, "gateway not reachable"))
    expectError(await request("GET", `/v0/agents/${agentId}/devices`, owner), 500, "CLI error")
    await control((c) => c.clearFailures(agentId))
    platformTokensFail = true
    expectError(await request("POST", `/v0/agents/${agentId}/platform/token`, owner), 500, "Token generation failed")
    platformTokensFail = false
    const restarted = await request("POST", `/v0/agents/${agentId}/restart`, owner, {})
    assert.strictEqual(restarted.status, 200)
    assert.strictEqual(restarted.body!["agent"].status, "running")
  })

  it("500 Gateway failed to start carries the agent, which is listed and can be restarted", async () => {
    await control((c) => c.failNextStart("*", "port 18789 in use"))
    const failed = await createAgent(owner, "unlucky")
    expectError(failed, 500, "Gateway failed to start", { agent: (agent) => assert.deepInclude(agent, { name: "unlucky", status: "not_running" }) })
    const agent = failed.body!["agent"]
    assert.strictEqual(agent.name, "unlucky")
    assert.strictEqual(agent.status, "not_running")
    const listed = (await request("GET", "/v0/agents", owner)).body!["agents"] as Array<{ agentId: string; status: string }>
    assert.deepInclude(listed, { ...listed.find((a) => a.agentId === agent.agentId)!, status: "not_running" })
    assert.strictEqual((await request("POST", `/v0/agents/${agent.agentId}/restart`, owner, {})).body!["agent"].status, "running")
  })

  it("503 Service unavailable when the engine cannot say which versions it offers, and no agent is left half-made", async () => {
    const token = (await key(await workspace(1))).token
    await control((c) => c.failEngine(new Error("registry unreachable")))
    try {
      expectError(await createAgent(token, "offline"), 503, "Service unavailable")
      expectError(await request("POST", `/v0/agents/${agentId}/restart`, owner, { version: "2026.1.1" }), 503, "Service unavailable")
    } finally {
      await control((c) => c.restoreEngine)
    }
    assert.deepStrictEqual((await request("GET", "/v0/agents", token)).body!["agents"], [])
    assert.strictEqual((await createAgent(token, "online")).status, 201)
  })
})

describe("agents", () => {
  it("gives exactly three of 20 concurrent creates against a limit of 3", async () => {
    const token = (await key(await workspace(3))).token
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => createAgent(token, `racer ${i}`)))
    assert.strictEqual(results.filter((r) => r.status === 201).length, 3)
    assert.strictEqual(results.filter((r) => r.status === 403 && r.body?.["error"] === "Agent limit reached").length, 17)
    assert.strictEqual(((await request("GET", "/v0/agents", token)).body!["agents"] as Array<unknown>).length, 3)
  })

  it("go from created to running, restart on a newer engine version, list devices, and mint platform tokens", async () => {
    const token = (await key(await workspace(2))).token
    const created = (await createAgent(token, "lifecycle")).body!["agent"]
    await waitForStatus(token, created.agentId, "running")
    const restarted = await request("POST", `/v0/agents/${created.agentId}/restart`, token, { version: created.engineVersion })
    assert.strictEqual(restarted.status, 200)
    await control((c) => c.addDevice(created.agentId, { id: "d1", name: "phone" }, "pending"))
    assert.deepStrictEqual((await request("GET", `/v0/agents/${created.agentId}/devices`, token)).body, { pending: [{ id: "d1", name: "phone" }], paired: [] })
    const minted = (await request("POST", `/v0/agents/${created.agentId}/platform/token`, token)).body!
    assert.match(minted["token"], /^eyJ/)
    assert.isTrue(Date.parse(minted["expiresAt"]) - Date.now() > 3500_000)
  })

  it("take a platform token on the agent's own routes and whoami, and nowhere else", async () => {
    const workspaceId = await workspace(2)
    const token = (await key(workspaceId, ["org:agents", "org:files:read"], "grace")).token
    const mine = (await createAgent(token, "platform mine")).body!["agent"].agentId as string
    const other = (await createAgent(token, "platform other")).body!["agent"].agentId as string
    await waitForStatus(token, mine, "running")
    const minted = (await request("POST", `/v0/agents/${mine}/platform/token`, token)).body!
    const platform = minted["token"] as string

    assert.strictEqual((await request("GET", `/v0/agents/${mine}`, platform)).body!["agent"].agentId, mine)
    assert.deepStrictEqual((await request("GET", `/v0/agents/${mine}/devices`, platform)).body, { pending: [], paired: [] })
    const me = (await request("GET", "/v0/platform/whoami", platform)).body!
    assert.deepStrictEqual(me, { userId: "grace", agentId: mine, workspaceId, expiresAt: minted["expiresAt"] })

    // Nothing else: another agent of the same workspace, the workspace's own routes, the files API.
    expectError(await request("GET", `/v0/agents/${other}`, platform), 401, "Unauthorized", { reason: "wrong-agent" })
    expectError(await request("GET", "/v0/agents", platform), 401, "Unauthorized", { reason: "missing-claims" })
    expectError(await request("GET", "/v0/secrets", platform), 401, "Unauthorized", { reason: "missing-claims" })
    assert.strictEqual((await request("GET", "/v3/files/public", platform)).status, 401)
    // And whoami takes nothing but a platform token.
    expectError(await request("GET", "/v0/platform/whoami", token), 401, "Unauthorized", { reason: "missing-claims" })
    expectError(await request("GET", "/v0/platform/whoami"), 401, "Unauthorized", { reason: "missing-credentials" })
    // A tampered token is refused; a deleted agent's token is good for nothing.
    const [header, payload, signature] = platform.split(".")
    const forged = [header, btoa(JSON.stringify({ ...JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/"))), aid: other })).replace(/=+$/, ""), signature].join(".")
    expectError(await request("GET", `/v0/agents/${other}`, forged), 401, "Unauthorized", { reason: "bad-signature" })
    assert.strictEqual((await request("DELETE", `/v0/agents/${mine}`, token)).status, 200)
    expectError(await request("GET", "/v0/platform/whoami", platform), 401, "Unauthorized", { reason: "wrong-agent" })
    expectError(await request("GET", `/v0/agents/${mine}`, platform), 401, "Unauthorized", { reason: "wrong-agent" })
  })

  it("restarted five times at once (a double click, a client's retry) all answer 200, and nothing false is recorded", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "clicked twice")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    const restarts = await Promise.all(Array.from({ length: 5 }, () => request("POST", `/v0/agents/${id}/restart`, token, {})))
    for (const restarted of restarts) {
      assert.strictEqual(restarted.status, 200, JSON.stringify(restarted.body))
      assert.strictEqual(restarted.body!["agent"].status, "running")
    }
    const events = (await request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<{ type: string }>
    assert.notInclude(events.map((e) => e.type), "AgentStartFailed")
    assert.strictEqual((await request("GET", `/v0/agents/${id}`, token)).body!["agent"].status, "running")
  })

  it("are recorded not_running when their gateway crashes, and the supervisor brings them back with growing delays", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "fragile")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    const events = async () => ((await request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<{ type: string; actor: string; data: any }>)
    const crashAndWatch = async () => {
      await control((c) => c.crash(id))
      await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning).pipe(Effect.provideService(CrashBackoff, backoff)))
    }
    const backoff = { initial: "100 millis", max: "1 second", stableAfter: "1 minute" } as const

    // The first attempt fails too; the second, after twice the delay, brings the gateway back.
    await control((c) => c.failNextStart(id, "still broken"))
    const before = (await events()).length
    await crashAndWatch()
    assert.strictEqual((await request("GET", `/v0/agents/${id}`, token)).body!["agent"].status, "not_running")
    await waitForStatus(token, id, "running")
    const recovery = (await events()).slice(before)
    assert.deepStrictEqual(recovery.map((e) => `${e.type}:${e.actor}`), [
      "AgentStopped:supervisor",
      "AgentRecoveryScheduled:supervisor",
      "AgentRestartRequested:supervisor",
      "AgentFailedToStart:engine",
      "AgentRecoveryScheduled:supervisor",
      "AgentRestartRequested:supervisor",
      "AgentStarted:engine"
    ])
    assert.deepStrictEqual(recovery.filter((e) => e.type === "AgentRecoveryScheduled").map((e) => [e.data.attempt, e.data.delayMs]), [[0, 100], [1, 200]])

    // A crash soon after the last one is the same crash loop: it starts from a longer delay.
    const again = (await events()).length
    await crashAndWatch()
    await waitForStatus(token, id, "running")
    assert.deepStrictEqual((await events()).slice(again).filter((e) => e.type === "AgentRecoveryScheduled").map((e) => e.data.delayMs), [200])
  })

  it("show their limits, and a gateway the OOM killer ended as its last stop, `oom`", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "hungry")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    const fresh = (await request("GET", `/v0/agents/${id}`, token)).body!
    // The simulated engine reports Cairn's default limits; no stop yet.
    assert.deepStrictEqual(fresh["limits"], { memoryBytes: 4 * 1024 ** 3, cpus: 1, pids: 512, diskBytes: 10 * 1024 ** 3 })
    assert.notProperty(fresh, "lastStop")
    await control((c) => c.crash(id, "oom"))
    const backoff = { initial: "10 millis", max: "100 millis", stableAfter: "1 minute" } as const
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning).pipe(Effect.provideService(CrashBackoff, backoff)))
    await waitForStatus(token, id, "running")
    const detail = (await request("GET", `/v0/agents/${id}`, token)).body!
    assert.strictEqual(detail["lastStop"].reason, "oom")
    assert.isTrue(Number.isFinite(Date.parse(detail["lastStop"].at)))
    const events = (await request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<{ type: string; data: any }>
    assert.strictEqual(events.find((e) => e.type === "AgentStopped")?.data.reason, "oom")
  })

  it("are not taken for crashed while their gateway is stopped on purpose, as during a restart", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "steady")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    await runtime.runPromise(AgentEngine.use((engine) => engine.stop(id)))
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning))
    const history = (await request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<{ type: string }>
    assert.strictEqual(history.at(-1)!.type, "AgentStarted")
    assert.strictEqual((await request("GET", `/v0/agents/${id}`, token)).body!["agent"].status, "running")
  })

  it("give way to the user's restart while the supervisor waits to bring them back", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "impatient")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    await control((c) => c.crash(id))
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning).pipe(
      Effect.provideService(CrashBackoff, { initial: "1 hour", max: "1 hour", stableAfter: "1 minute" })
    ))
    assert.strictEqual((await request("POST", `/v0/agents/${id}/restart`, token, {})).body!["agent"].status, "running")
    const history = (await request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<{ type: string; actor: string }>
    assert.deepInclude(history.at(-1)!, { type: "AgentStarted", actor: "engine" })
    assert.strictEqual(history.filter((e) => e.type === "AgentRestartRequested" && e.actor === "supervisor").length, 0)
  })

  it("go on recovering from a crash when Cairn starts again", async () => {
    const token = (await key(await workspace(1))).token
    const id = (await createAgent(token, "phoenix")).body!["agent"].agentId as string
    await waitForStatus(token, id, "running")
    await control((c) => c.crash(id))
    // Cairn goes down while the supervisor waits to bring the agent back...
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning).pipe(
      Effect.provideService(CrashBackoff, { initial: "1 hour", max: "1 hour", stableAfter: "1 minute" })
    ))
    assert.strictEqual((await request("GET", `/v0/agents/${id}`, token)).body!["agent"].status, "not_running")
    // ...and resumes supervision when it starts again.
    await runtime.runPromise(Gateway.use((gateway) => gateway.resume).pipe(
      Effect.provideService(CrashBackoff, { initial: "10 millis", max: "1 second", stableAfter: "1 minute" })
    ))
    await waitForStatus(token, id, "running")
  })

  it("on another Cairn node are that node's to supervise: this one neither takes them for crashed nor starts them", async () => {
    const agentId = `elsewhere${Date.now().toString(36)}`
    const at = new Date().toISOString()
    await runtime.runPromise(EventStore.use((store) => store.append([{
      stream: Agent.stream(agentId),
      expected: ExpectedVersion.NoStream,
      events: [
        encode(new Agent.AgentCreated({ agentId, workspaceId: "w-elsewhere", userId: "ada", name: "remote", engineVersion: "2026.1.1", node: "other-node", at }), "ada"),
        encode(new Agent.AgentStarted({ agentId, engineVersion: "2026.1.1", node: "other-node", at }), "engine")
      ]
    }])))
    await runtime.runPromise(Gateway.use((gateway) => gateway.checkRunning.pipe(Effect.andThen(gateway.resume))))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const history = await runtime.runPromise(EventStore.use((store) => store.readStream(Agent.stream(agentId))))
    assert.deepStrictEqual(history.map((e) => e.type), ["AgentCreated", "AgentStarted"])
  })

  it("deleted or moved through another node have their gateway here destroyed or stopped", async () => {
    const token = (await key(await workspace(2))).token
    const [deleted, moved] = [(await createAgent(token, "deleted")).body!["agent"].agentId as string, (await createAgent(token, "moved")).body!["agent"].agentId as string]
    await waitForStatus(token, deleted, "running")
    await waitForStatus(token, moved, "running")
    const at = new Date().toISOString()
    // What another node records when a user deletes one agent and restarts the other there.
    await runtime.runPromise(EventStore.use((store) => store.append([
      { stream: Agent.stream(deleted), expected: ExpectedVersion.Any, events: [encode(new Agent.AgentDeleted({ agentId: deleted, at }), "ada")] },
      { stream: Agent.stream(moved), expected: ExpectedVersion.Any, events: [encode(new Agent.AgentStarted({ agentId: moved, engineVersion: "2026.1.1", node: "other-node", at }), "engine")] }
    ])))
    await runtime.runPromise(Gateway.use((gateway) => gateway.releaseForeign))
    const status = (agentId: string) =>
      runtime.runPromise(AgentEngine.use((engine) => engine.status(agentId).pipe(Effect.map((s) => s.state), Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("gone")))))
    assert.strictEqual(await status(deleted), "gone")
    assert.strictEqual(await status(moved), "stopped")
  })

  it("free their quota slot when deleted, and are gone", async () => {
    const token = (await key(await workspace(1))).token
    const first = (await createAgent(token, "first")).body!["agent"].agentId as string
    assert.strictEqual((await request("DELETE", `/v0/agents/${first}`, token)).status, 200)
    assert.strictEqual((await request("GET", `/v0/agents/${first}`, token)).status, 404)
    assert.strictEqual((await createAgent(token, "second")).status, 201)
  })

  it("keep their history as events with actor and time, and a replay rebuilds the list exactly", async () => {
    const history = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body!["events"] as Array<{ type: string; actor: string; at: string }>
    assert.includeMembers(history.map((e) => e.type), ["AgentCreated", "AgentStarted", "GatewayTokenRotated", "AgentRestartRequested"])
    assert.strictEqual(history[0]!.actor, "ada")
    assert.isTrue(history.every((e) => !Number.isNaN(Date.parse(e.at))))
    const snapshot = () => runtime.runPromise(SqlClient.SqlClient.use((sql) => sql`SELECT * FROM cairn_agents ORDER BY id`))
    const before = await snapshot()
    await runtime.runPromise(EventStore.use((store) => store.rebuildInline("agents")))
    assert.deepStrictEqual(await snapshot(), before)
  })

  it("are open to internal accounts' issues", async () => {
    const internal = (await key(await workspace(1, true))).token
    const filed = await request("POST", "/v0/issues", internal, { title: "Gateway slow", body: "details" })
    assert.strictEqual(filed.status, 201)
    assert.deepStrictEqual(((await request("GET", "/v0/issues", internal)).body!["issues"] as Array<{ title: string }>).map((i) => i.title), ["Gateway slow"])
  })
})
