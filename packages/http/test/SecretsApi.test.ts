/**
 * Workspace secrets through the real routes, on the simulated engine: the documented table row by row, delivery
 * to the gateway's environment, tampering, crypto-shredding, and a race for one name. Runs on PGlite, and on a
 * fresh Postgres database when DATABASE_URL is set.
 */
import { SecretVault } from "@cairn/application"
import { NoMasterKeys } from "@cairn/auth/node"
import { Secret } from "@cairn/domain"
import { EventStore } from "@cairn/event-store"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { SqlClient } from "effect/sql"

const api = TestRuntime.makeTestApi()
const { request, workspace, key, control, runtime } = api
afterAll(api.dispose)

const { expectError } = ApiKit
const { createAgent, waitForStatus } = ApiKit.make(request)
const createSecret = (token: string, name: unknown, value: unknown) => request("POST", "/v0/secrets", token, { name, value })
const secretsOf = async (token: string, agentId: string) =>
  (await request("GET", `/v0/agents/${agentId}`, token)).body!["secrets"] as Array<{ id: string; name: string; synced: boolean }>

let owner: string
let workspaceId: string

beforeAll(async () => {
  workspaceId = await workspace(10)
  owner = (await key(workspaceId)).token
}, 120_000)

describe("creating a secret", () => {
  it("answers 201 with the secret and never its value", async () => {
    const created = await createSecret(owner, "OPENROUTER_API_KEY", "sk-or-v1-created-value")
    assert.strictEqual(created.status, 201)
    assert.strictEqual(created.body!["success"], true)
    const secret = created.body!["secret"]
    assert.deepStrictEqual(Object.keys(secret).sort(), ["createdAt", "id", "name", "updatedAt", "userId"])
    assert.strictEqual(secret.name, "OPENROUTER_API_KEY")
    assert.strictEqual(secret.userId, "ada")
    assert.notInclude(JSON.stringify(created.body), "created-value")
  })

  it("refuses an empty or missing name or value, a name that is no variable name, a value over 64 KiB: 400 Validation failed", async () => {
    expectError(await request("POST", "/v0/secrets", owner, { value: "v" }), 400, "Validation failed: name is required")
    expectError(await createSecret(owner, "", "v"), 400, "Validation failed: name is required")
    expectError(await createSecret(owner, "OK_NAME", ""), 400, "Validation failed: value is required")
    expectError(await request("POST", "/v0/secrets", owner, { name: "OK_NAME" }), 400, "Validation failed: value is required")
    expectError(await createSecret(owner, "1BAD", "v"), 400, /^Validation failed: name must be an environment variable name/)
    expectError(await createSecret(owner, "BAD-NAME", "v"), 400, /^Validation failed: /)
    expectError(await createSecret(owner, "X".repeat(129), "v"), 400, "Validation failed: name must be at most 128 characters")
    expectError(await createSecret(owner, "BIG", "x".repeat(64 * 1024 + 1)), 400, "Validation failed: value must be at most 65536 bytes")
    expectError(await createSecret(owner, "OPENCLAW_GATEWAY_TOKEN", "v"), 400, /^Validation failed: name OPENCLAW_GATEWAY_TOKEN is reserved/)
    expectError(await request("POST", "/v0/secrets", owner, "not json" as unknown as object), 400, /^Validation failed: /)
    assert.strictEqual((await createSecret(owner, "BIG_OK", "x".repeat(64 * 1024))).status, 201)
  })

  it("refuses a name its workspace already has: 409 Duplicate secret name, while another workspace may use it", async () => {
    assert.strictEqual((await createSecret(owner, "DUPLICATED", "one")).status, 201)
    expectError(await createSecret(owner, "DUPLICATED", "two"), 409, "Duplicate secret name")
    const other = (await key(await workspace(1))).token
    assert.strictEqual((await createSecret(other, "DUPLICATED", "three")).status, 201)
  })

  it("gives exactly one of 20 parallel creates of one name a 201, and the rest 409", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => createSecret(owner, "RACED_NAME", `value-${i}`)))
    assert.strictEqual(results.filter((r) => r.status === 201).length, 1)
    assert.strictEqual(results.filter((r) => r.status === 409 && r.body?.["error"] === "Duplicate secret name").length, 19)
    const listed = (await request("GET", "/v0/secrets", owner)).body!["secrets"] as Array<{ name: string }>
    assert.strictEqual(listed.filter((s) => s.name === "RACED_NAME").length, 1)
  })

  it("answers 503 Secrets not configured without a master key, stores nothing, and the rest of the service works", async () => {
    const bare = TestRuntime.makeTestApi({ masterKeys: NoMasterKeys.layer })
    try {
      const token = (await bare.key(await bare.workspace(1))).token
      expectError(await bare.request("POST", "/v0/secrets", token, { name: "ANTHROPIC_API_KEY", value: "sk-ant-x" }), 503, "Secrets not configured")
      assert.deepStrictEqual((await bare.request("GET", "/v0/secrets", token)).body, { secrets: [] })
      const events = await bare.runtime.runPromise(SqlClient.SqlClient.use((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM cairn_events WHERE stream_id LIKE 'secret-%' OR stream_id LIKE 'reservation-%'`))
      assert.strictEqual(events[0]!.n, 0)
      assert.strictEqual((await bare.request("POST", "/v0/agents", token, { name: "works" })).status, 201)
    } finally {
      await bare.dispose()
    }
  })
})

describe("a secret's life", () => {
  it("is listed with its agents, changed, refused deletion while attached (naming them), detached and deleted", async () => {
    const id = (await createSecret(owner, "LIFE_TOKEN", "first")).body!["secret"].id as string
    const agent = (await createAgent(owner, { name: "keeper" })).body!["agent"].agentId as string
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: [id] })).body, { success: true, attached: 1 })
    const listed = ((await request("GET", "/v0/secrets", owner)).body!["secrets"] as Array<{ id: string; agents: Array<unknown> }>).find((s) => s.id === id)!
    assert.deepStrictEqual(listed.agents, [{ agentId: agent, name: "keeper" }])
    assert.notInclude(JSON.stringify(listed), "first")

    const changed = await request("PUT", `/v0/secrets/${id}`, owner, { value: "second" })
    assert.strictEqual(changed.status, 200)
    assert.isTrue(Date.parse(changed.body!["secret"].updatedAt) >= Date.parse(changed.body!["secret"].createdAt))
    expectError(await request("PUT", `/v0/secrets/${id}`, owner, { value: "" }), 400, "Validation failed: value is required")

    const refused = await request("DELETE", `/v0/secrets/${id}`, owner)
    expectError(refused, 409, /keeper/, { agents: [{ agentId: agent, name: "keeper" }] })
    assert.include(refused.body!["error"], agent)
    assert.strictEqual((await request("DELETE", `/v0/agents/${agent}/secrets/${id}`, owner)).status, 200)
    assert.strictEqual((await request("DELETE", `/v0/secrets/${id}`, owner)).status, 200)
    expectError(await request("DELETE", `/v0/secrets/${id}`, owner), 404, "Secret not found")
    // Its name is free again.
    assert.strictEqual((await createSecret(owner, "LIFE_TOKEN", "again")).status, 201)
  })

  it("is not found by another workspace, nor under a made-up id", async () => {
    const id = (await createSecret(owner, "PRIVATE_TOKEN", "mine")).body!["secret"].id as string
    const stranger = (await key(await workspace(1))).token
    expectError(await request("DELETE", `/v0/secrets/${id}`, stranger), 404, "Secret not found")
    expectError(await request("PUT", `/v0/secrets/${id}`, stranger, { value: "theirs" }), 404, "Secret not found")
    expectError(await request("DELETE", "/v0/secrets/no-such-secret", owner), 404, "Secret not found")
    assert.notInclude(JSON.stringify((await request("GET", "/v0/secrets", stranger)).body), "PRIVATE_TOKEN")
  })
})

describe("attaching secrets", () => {
  it("refuses an unknown secret (404), another workspace's agent (404) and two credentials for one provider (409 Conflicting secrets)", async () => {
    const apiKey = (await createSecret(owner, "ANTHROPIC_API_KEY", "sk-ant-api03-one")).body!["secret"].id as string
    const oauth = (await createSecret(owner, "ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat01-two")).body!["secret"].id as string
    const agent = (await createAgent(owner, { name: "picky" })).body!["agent"].agentId as string
    expectError(await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: ["nope"] }), 404, "Secret not found")
    expectError(await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: [] }), 400, /^Validation failed: /)
    assert.strictEqual((await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: [apiKey] })).status, 200)
    const conflict = await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: [oauth] })
    const anthropic = { provider: "anthropic", secrets: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"] }
    expectError(conflict, 409, "Conflicting secrets", { conflict: anthropic })
    assert.deepStrictEqual(conflict.body!["conflict"], { provider: "anthropic", secrets: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"] })
    assert.deepStrictEqual((await secretsOf(owner, agent)).map((s) => s.name), ["ANTHROPIC_API_KEY"])
    const stranger = (await key(await workspace(1))).token
    expectError(await request("POST", `/v0/agents/${agent}/secrets`, stranger, { secretIds: [apiKey] }), 404, "Agent not found")
    // A create names its secrets with the same checks, all in one command.
    expectError(await createAgent(owner, { name: "conflicted", secretIds: [apiKey, oauth] }), 409, "Conflicting secrets", { conflict: anthropic })
    expectError(await createAgent(owner, { name: "lost", secretIds: ["nope"] }), 404, "Secret not found")
  })

  it("works with the agent's gateway token, and a create can attach them", async () => {
    const id = (await createSecret(owner, "GATEWAY_ATTACHED", "via-gateway")).body!["secret"].id as string
    const agent = (await createAgent(owner, { name: "self-service" })).body!["agent"].agentId as string
    const gatewayToken = (await request("GET", `/v0/agents/${agent}/gateway-token`, owner)).body!["gatewayToken"] as string
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agent}/secrets`, gatewayToken, { secretIds: [id] })).body, { success: true, attached: 1 })
    assert.strictEqual((await request("DELETE", `/v0/agents/${agent}/secrets/${id}`, gatewayToken)).status, 200)
    const withSecret = await createAgent(owner, { name: "born-with-it", secretIds: [id] })
    assert.strictEqual(withSecret.status, 201)
    assert.deepStrictEqual((await secretsOf(owner, withSecret.body!["agent"].agentId)).map((s) => s.name), ["GATEWAY_ATTACHED"])
  })
})

describe("delivery to the gateway", () => {
  const environmentOf = (agentId: string) => control((c) => c.environmentOf(agentId))
  const restart = (agentId: string) => request("POST", `/v0/agents/${agentId}/restart`, owner, {})

  it("puts attached secrets in the gateway's environment at its start; changes are synced:false until a restart applies them", async () => {
    const id = (await createSecret(owner, "DELIVERED_KEY", "value-one")).body!["secret"].id as string
    const agent = (await createAgent(owner, { name: "receiver", secretIds: [id] })).body!["agent"].agentId as string
    await waitForStatus(owner, agent, "running")
    assert.strictEqual((await environmentOf(agent))?.["DELIVERED_KEY"], "value-one")
    assert.deepStrictEqual((await secretsOf(owner, agent)).map((s) => [s.name, s.synced]), [["DELIVERED_KEY", true]])

    await request("PUT", `/v0/secrets/${id}`, owner, { value: "value-two" })
    assert.deepStrictEqual((await secretsOf(owner, agent)).map((s) => s.synced), [false])
    assert.strictEqual((await environmentOf(agent))?.["DELIVERED_KEY"], "value-one", "a running gateway keeps what it started with")
    assert.strictEqual((await restart(agent)).status, 200)
    assert.strictEqual((await environmentOf(agent))?.["DELIVERED_KEY"], "value-two")
    assert.deepStrictEqual((await secretsOf(owner, agent)).map((s) => s.synced), [true])

    const other = (await createSecret(owner, "LATE_KEY", "late")).body!["secret"].id as string
    await request("POST", `/v0/agents/${agent}/secrets`, owner, { secretIds: [other] })
    assert.deepStrictEqual((await secretsOf(owner, agent)).map((s) => [s.name, s.synced]), [["DELIVERED_KEY", true], ["LATE_KEY", false]])
    await request("DELETE", `/v0/agents/${agent}/secrets/${id}`, owner)
    await restart(agent)
    const environment = await environmentOf(agent)
    assert.strictEqual(environment?.["DELIVERED_KEY"], undefined)
    assert.strictEqual(environment?.["LATE_KEY"], "late")
  })

  it("never starts a gateway with a ciphertext that was tampered with or swapped: 500 Restart failed with the reason", async () => {
    const sql = (f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) => runtime.runPromise(SqlClient.SqlClient.use(f) as Effect.Effect<unknown>)
    const first = (await createSecret(owner, "TAMPERED_ONE", "untouched-one")).body!["secret"].id as string
    const second = (await createSecret(owner, "TAMPERED_TWO", "untouched-two")).body!["secret"].id as string
    const agent = (await createAgent(owner, { name: "guarded", secretIds: [first] })).body!["agent"].agentId as string
    await waitForStatus(owner, agent, "running")

    // One byte of the stored ciphertext flipped, in the log itself.
    const flipped = (text: string) => {
      const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
      bytes[0] = bytes[0]! ^ 1
      return btoa(String.fromCharCode(...bytes))
    }
    const sealedOf = async (secretId: string) =>
      ((await sql((s) => s`SELECT data FROM cairn_events WHERE stream_id = ${Secret.stream(secretId)} AND type = 'SecretCreated'`)) as Array<{ data: { sealed: Secret.Sealed } }>)[0]!.data.sealed
    const original = await sealedOf(first)
    await sql((s) => s`UPDATE cairn_events SET data = jsonb_set(data, '{sealed,ciphertext}', to_jsonb(${flipped(original.ciphertext)}::text)) WHERE stream_id = ${Secret.stream(first)} AND type = 'SecretCreated'`)
    const refused = await restart(agent)
    expectError(refused, 500, "Restart failed", { reason: /could not be decrypted/ })
    assert.match(refused.body!["reason"], /could not be decrypted/)
    assert.notInclude(JSON.stringify(refused.body), "untouched")
    assert.strictEqual((await request("GET", `/v0/agents/${agent}`, owner)).body!["agent"].status, "not_running")

    // The other secret's ciphertext, moved onto this one: it does not open either (bound to its own secret id).
    const other = await sealedOf(second)
    await sql((s) => s`UPDATE cairn_events SET data = jsonb_set(data, '{sealed}', ${JSON.stringify(other)}::jsonb) WHERE stream_id = ${Secret.stream(first)} AND type = 'SecretCreated'`)
    expectError(await restart(agent), 500, "Restart failed", { reason: /could not be decrypted/ })
    assert.notStrictEqual((await environmentOf(agent))?.["TAMPERED_ONE"], "untouched-two")

    // Put back, it opens again.
    await sql((s) => s`UPDATE cairn_events SET data = jsonb_set(data, '{sealed}', ${JSON.stringify(original)}::jsonb) WHERE stream_id = ${Secret.stream(first)} AND type = 'SecretCreated'`)
    assert.strictEqual((await restart(agent)).status, 200)
    assert.strictEqual((await environmentOf(agent))?.["TAMPERED_ONE"], "untouched-one")
  })
})

describe("deleting a workspace", () => {
  it("destroys its data key: every ciphertext of it left in the immutable log can never be opened again", async () => {
    const doomed = await workspace(2)
    const token = (await key(doomed)).token
    const id = (await createSecret(token, "SHREDDED_KEY", "gone-forever")).body!["secret"].id as string
    const agent = (await createAgent(token, { name: "short-lived", secretIds: [id] })).body!["agent"].agentId as string
    expectError(await request("DELETE", `/admin/workspaces/${doomed}`, TestRuntime.adminToken), 409, /still has 1 agent/)
    await request("DELETE", `/v0/agents/${agent}`, token)

    const openFromLog = runtime.runPromise(Effect.gen(function*() {
      const stored = yield* EventStore.use((store) => store.readStream(Secret.stream(id)))
      const created = Schema.decodeUnknownSync(Secret.SecretCreated)(stored[0]!.data)
      const vault = yield* SecretVault
      return yield* Effect.exit(vault.open(doomed, id, 1, created.sealed))
    }))
    assert.isTrue(Exit.isSuccess(await openFromLog), "the value opens before the workspace is deleted")
    assert.strictEqual((await request("DELETE", `/admin/workspaces/${doomed}`, TestRuntime.adminToken)).status, 200)
    const after = await runtime.runPromise(Effect.gen(function*() {
      const stored = yield* EventStore.use((store) => store.readStream(Secret.stream(id)))
      const created = Schema.decodeUnknownSync(Secret.SecretCreated)(stored[0]!.data)
      return yield* Effect.exit((yield* SecretVault).open(doomed, id, 1, created.sealed))
    }))
    assert.isTrue(Exit.isFailure(after))
    assert.match(JSON.stringify(after), /SecretUnreadable/)
    expectError(await request("GET", "/v0/secrets", token), 401, "Unauthorized", { reason: "revoked" })
  })
})
